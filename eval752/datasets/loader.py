"""``load_dataset``: read a native dataset (one ``.jsonl`` file or a folder) and report every problem at once.

Layouts:

* one file ``name.jsonl`` (or ``name.jsonl.gz``): one section named after the file's stem; assets, if any,
  live in ``assets/`` next to the file;
* a folder with ``sections/*.jsonl`` (each file a section, sorted by name) and ``assets/``.

Every problem is one line ``file:line: field: what is wrong``. Problems about the dataset as a whole (an
unknown section in the filter, no items at all, a missing folder) use ``-`` for the line, and the path
given to ``load_dataset`` as the file. ``Dataset.sections`` lists the selected sections that hold at least
one item (after ``limit``).
"""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any, Iterable

from ..errors import DatasetError
from ..registry import unknown_name_message
from ..types import Item
from .dataset import ASSETS_DIR, SECTIONS_DIR, Dataset, asset_problem
from .jsonl import DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINE_BYTES, LineProblem, iter_jsonl
from .native import MEDIA_KINDS, parse_item


def stem_of(path: Path) -> str:
    """``a/b/test.jsonl.gz`` -> ``test``."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _media_paths(obj: Any) -> Iterable[tuple[str, str]]:
    """(field path, asset path) for every well-formed media entry of a parsed line, valid or not otherwise."""
    inputs = obj.get("inputs") if isinstance(obj, dict) else None
    if not isinstance(inputs, dict):
        return
    for kind in MEDIA_KINDS:
        paths = inputs.get(kind)
        if isinstance(paths, list):
            for i, rel in enumerate(paths):
                if isinstance(rel, str) and rel.strip():
                    yield f"inputs.{kind}[{i}]", rel


def _check_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a whole number >= 0 or None, got {limit!r}")


def select(dataset: Dataset, *, limit: int | None = None) -> Dataset:
    """Keep the first ``limit`` items; drop sections left without items."""
    _check_limit(limit)
    items = dataset.items if limit is None else dataset.items[:limit]
    present = {item.section for item in items}
    sections = tuple(s for s in dataset.sections if s in present)
    if items == dataset.items and sections == dataset.sections:
        return dataset
    return Dataset(name=dataset.name, root=dataset.root, items=items, sections=sections)


def filter_sections(given: str, available: list[str], wanted: list[str] | None) -> tuple[list[str], list[str]]:
    """(selected sections in dataset order, problems for names that are not sections)."""
    if wanted is None:
        return list(available), []
    problems = [
        f"{given}:-: sections: {unknown_name_message('section', name, available)}"
        for name in dict.fromkeys(wanted)
        if name not in available
    ]
    chosen = set(wanted)
    return [s for s in available if s in chosen], problems


def _section_files(path: Path, given: str) -> tuple[str, Path, list[tuple[str, Path, str]]]:
    """(name, root, [(section, file, file as shown)]) or DatasetError."""
    if path.is_dir():
        folder = path / SECTIONS_DIR
        if not folder.is_dir():
            raise DatasetError([f"{given}:-: -: folder has no {SECTIONS_DIR}/ folder (a dataset folder holds "
                                f"{SECTIONS_DIR}/*.jsonl and {ASSETS_DIR}/)"])
        files = sorted((p for p in folder.iterdir() if p.name.endswith(".jsonl") and p.is_file()),
                       key=lambda p: p.name)
        if not files:
            raise DatasetError([f"{given}:-: -: no {SECTIONS_DIR}/*.jsonl files"])
        shown = Path(given) / SECTIONS_DIR
        outside = [p for p in files if not p.resolve().is_relative_to(path.resolve())]
        if outside:  # a section must be the folder's own data, like its assets
            raise DatasetError([f"{shown / p.name}:-: -: is a symbolic link to a file outside the dataset folder"
                                for p in outside])
        name = path.name or path.resolve().name
        return name, path, [(stem_of(p), p, str(shown / p.name)) for p in files]
    if path.is_file():
        return stem_of(path), path.parent, [(stem_of(path), path, given)]
    raise DatasetError([f"{given}:-: -: no such file or folder"])


def load_dataset(
    path: str | Path,
    *,
    sections: list[str] | None = None,
    limit: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Dataset:
    """Load and validate a native dataset; raise ``DatasetError`` listing every problem."""
    _check_limit(limit)
    given = str(path)
    name, root, files = _section_files(Path(path), given)
    selected, problems = filter_sections(given, [s for s, _, _ in files], sections)
    items: list[Item] = []
    first_seen: dict[str, tuple[str, int]] = {}
    for section, file, shown in files:
        if section not in selected:
            continue
        try:
            for line_no, value in iter_jsonl(file, max_line_bytes=max_line_bytes, max_depth=max_depth):
                if isinstance(value, LineProblem):
                    problems.append(value.format(shown, line_no))
                    continue
                item, found = parse_item(value, section)
                problems.extend(f"{shown}:{line_no}: {field}: {what}" for field, what in found)
                item_id = value.get("id") if isinstance(value, dict) else None
                if isinstance(item_id, str) and item_id.strip():
                    if item_id in first_seen:
                        first_file, first_line = first_seen[item_id]
                        where = f"line {first_line}" if first_file == shown else f"{first_file}:{first_line}"
                        problems.append(f"{shown}:{line_no}: id: duplicate id {item_id!r} (first at {where})")
                        item = None
                    else:
                        first_seen[item_id] = (shown, line_no)
                for field, rel in _media_paths(value):
                    problem = asset_problem(root, rel)
                    if problem:
                        problems.append(f"{shown}:{line_no}: {field}: {problem}")
                        item = None
                if item is not None:
                    items.append(item)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            problems.append(f"{shown}:-: -: cannot read the file: {exc}")
    if not items and not problems:
        problems.append(f"{given}:-: -: dataset has no items")
    if problems:
        raise DatasetError(problems)
    dataset = Dataset(name=name, root=root, items=tuple(items), sections=tuple(selected))
    return select(dataset, limit=limit)
