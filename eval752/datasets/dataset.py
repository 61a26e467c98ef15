"""``Dataset``: validated items grouped into sections, a content hash, and the native folder writer.

The version hash is SHA-256 over, in order: for each section that has items, a ``{"section": name}`` record and then
the canonical JSON of each of its items' ``Item.to_json()``; then, for each referenced asset (sorted by
path, each once), ``{"asset": path, "sha256": <hash of its bytes>}``. Records are separated by newlines.
It therefore ignores file whitespace and key order, and changes when any answer, text, section name or
asset byte changes. It is computed on first use and cached on the instance.
"""
from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable

from ..types import Item, canonical_json
from .native import MEDIA_KINDS

ASSETS_DIR = "assets"
SECTIONS_DIR = "sections"


@dataclass(frozen=True)
class Dataset:
    name: str
    root: Path | None  # the folder holding assets/ (None for datasets that have no files of their own)
    items: tuple[Item, ...]
    sections: tuple[str, ...]

    @cached_property
    def version_hash(self) -> str:
        digest = hashlib.sha256()
        by_section: dict[str, list[Item]] = {name: [] for name in self.sections}
        for item in self.items:
            by_section.setdefault(item.section, []).append(item)
        for name, items in by_section.items():
            if not items:
                continue  # an empty section holds no content: it does not change the hash
            digest.update(canonical_json({"section": name}).encode("utf-8") + b"\n")
            for item in items:
                digest.update(canonical_json(item.to_json()).encode("utf-8") + b"\n")
        for rel in self.referenced_assets():
            record = {"asset": rel, "sha256": _file_sha256(self.asset_path(rel))}
            digest.update(canonical_json(record).encode("utf-8") + b"\n")
        return digest.hexdigest()

    def referenced_assets(self) -> list[str]:
        """Every asset path the items name, sorted, each once."""
        return sorted({rel for item in self.items for kind in MEDIA_KINDS for rel in getattr(item, kind)})

    def items_needing_vision(self) -> list[str]:
        return [item.id for item in self.items if item.images]

    def asset_path(self, rel: str) -> Path:
        """The file an item's relative asset path names. Raises ValueError for paths that escape assets/."""
        if self.root is None:
            raise ValueError(f"dataset {self.name!r} has no folder, so it has no asset {rel!r}")
        problem = asset_path_problem(rel)
        if problem:
            raise ValueError(problem)
        return self.root / ASSETS_DIR / rel


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def asset_path_problem(rel: str) -> str | None:
    """What is wrong with the spelling of an asset path (absolute, or climbing out with ``..``), if anything."""
    if rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        return f"asset path {rel!r} is absolute; give a path relative to {ASSETS_DIR}/"
    if ".." in re.split(r"[\\/]", rel):
        return f"asset path {rel!r} escapes the dataset folder"
    return None


def asset_problem(root: Path, rel: str) -> str | None:
    """Spelling, containment (after resolving symlinks) and existence of one asset, in that order."""
    problem = asset_path_problem(rel)
    if problem:
        return problem
    path = root / ASSETS_DIR / rel
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return f"asset {rel!r} resolves outside the dataset folder"
    if not path.is_file():
        return f"asset {rel!r} not found (looked for {path})"
    return None


def make_dataset(name: str, root: Path | None, items: Iterable[Item]) -> Dataset:
    """Group items by section (sections sorted by name, items in their given order within each)."""
    grouped: dict[str, list[Item]] = {}
    for item in items:
        grouped.setdefault(item.section, []).append(item)
    sections = tuple(sorted(grouped))
    ordered = tuple(item for section in sections for item in grouped[section])
    return Dataset(name=name, root=root, items=ordered, sections=sections)


def _valid_section_name(name: str) -> bool:
    return bool(name) and not name.startswith(".") and not re.search(r"[\\/\x00]", name)


def write_dataset(dataset: Dataset, folder: Path) -> None:
    """Write the native folder layout: ``sections/<section>.jsonl`` plus the referenced assets.

    The folder must be absent or empty (stale section files would otherwise be loaded back). Sections must
    be in sorted order, as ``load_dataset`` and the importers give them, so that loading the folder gives
    the same ``version_hash``.
    """
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty; write a dataset into a new or empty folder")
    if list(dataset.sections) != sorted(dataset.sections):
        raise ValueError(f"sections must be in sorted order to round-trip, got {list(dataset.sections)}")
    for name in dataset.sections:
        if not _valid_section_name(name):
            raise ValueError(f"section name {name!r} cannot be a file name")
    stray = sorted({item.section for item in dataset.items} - set(dataset.sections))
    if stray:
        raise ValueError(f"items name sections that the dataset does not list: {stray}")
    (folder / SECTIONS_DIR).mkdir(parents=True, exist_ok=True)
    by_section: dict[str, list[Item]] = {name: [] for name in dataset.sections}
    for item in dataset.items:
        by_section[item.section].append(item)
    for name, items in by_section.items():
        with open(folder / SECTIONS_DIR / f"{name}.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for item in items:
                f.write(canonical_json(item.to_json()) + "\n")
    for rel in dataset.referenced_assets():
        target = folder / ASSETS_DIR / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dataset.asset_path(rel), target)
