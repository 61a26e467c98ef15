"""Column mappings: turn the rows of a tabular dataset (Hugging Face ``datasets``, parquet, CSV, JSON) into
native items. The mapping is plain data (a YAML file in ``conf/mapping/`` or command-line flags):

``name``            dataset name (default: the file stem or the hub id's last part)
``type``            item type for every row (default ``freeform``); ``type_column`` reads it per row
``id``              id column (default: ``<name>-<row number>``, 1-based)
``prompt``          the question column (required)
``choices``         a list column, or a list of columns (``[A, B, C, D]``, ``[answer_a, ...]``)
``answer``          the answer column; ``answer_format``: ``text`` (as written), ``letter`` (A, B, ...),
                    ``index`` (0-based), ``final_number`` (the number after the last ``####``, GSM8K)
``section``         a fixed section name; ``section_column`` reads it per row (default: the split or stem)
``checker``         a checker name for every item
``criteria``        columns: one column's value, or ``{column: value}`` for several
``meta``            columns copied into ``meta`` (a list, or ``{meta key: column}``)
``image``           an image column (HF ``Image``, ``{"bytes", "path"}``, raw bytes): written to
                    ``assets/images/<id>.png`` and listed in ``inputs.images``

Unusable rows (an answer letter outside the choices, an empty question, ...) are reported as warnings
``row N: column: what; row skipped`` and left out, never kept silently. MCQ rows whose choices repeat a text
keep it once (``meta.merged_duplicate_choices`` names the dropped letters), as the MMLU importer does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError
from ..types import Item
from .gsm8k import final_answer
from .native import MCQ_TYPES, parse_item

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ANSWER_FORMATS = ("text", "letter", "index", "final_number")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class Mapping:
    prompt: str = ""
    name: str | None = None
    type: str = "freeform"
    type_column: str | None = None
    id: str | None = None
    choices: Any = None
    answer: str | None = None
    answer_format: str = "text"
    section: str | None = None
    section_column: str | None = None
    checker: Any = None
    criteria: list[str] = field(default_factory=list)
    meta: Any = field(default_factory=list)
    image: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str) -> "Mapping":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown mapping key {unknown[0]!r}; valid keys: {', '.join(sorted(known))}")
        m = cls(**data)
        if not m.prompt:
            raise ConfigError(f"{source}: the mapping needs a prompt column (prompt: <column>)")
        if m.answer_format not in ANSWER_FORMATS:
            raise ConfigError(f"{source}: answer_format must be one of {', '.join(ANSWER_FORMATS)}, "
                              f"got {m.answer_format!r}")
        if isinstance(m.criteria, str):
            m.criteria = [m.criteria]
        return m

    def columns(self) -> list[str]:
        """Every column the mapping reads, in a stable order."""
        cols = [self.prompt, self.id, self.answer, self.type_column, self.section_column, self.image]
        if isinstance(self.choices, str):
            cols.append(self.choices)
        elif isinstance(self.choices, list):
            cols += self.choices
        cols += list(self.criteria)
        cols += list(self.meta.values()) if isinstance(self.meta, dict) else list(self.meta)
        return [c for c in dict.fromkeys(cols) if c]


def check_columns(mapping: Mapping, available: list[str]) -> None:
    missing = [c for c in mapping.columns() if c not in available]
    if missing:
        raise ConfigError(f"column {missing[0]!r} is not in the dataset; available columns: {', '.join(available)}")


def _choices(mapping: Mapping, row: dict[str, Any]) -> list[Any] | None:
    if mapping.choices is None:
        return None
    if isinstance(mapping.choices, str):
        value = row[mapping.choices]
        return list(value) if isinstance(value, (list, tuple)) else [value]
    return [row[c] for c in mapping.choices]


def _answer(mapping: Mapping, value: Any, choices: list[Any] | None) -> tuple[Any, str | None]:
    """(answer, problem)."""
    fmt = mapping.answer_format
    if fmt == "final_number":
        number = final_answer(str(value))
        return (number, None) if number is not None else (None, "no '#### <number>' at the end of the answer")
    if fmt == "text" or value is None:
        return value, None
    items = value if isinstance(value, (list, tuple)) else [value]
    picked = []
    for one in items:
        if choices is None:
            return None, f"answer_format {fmt} needs choices"
        if fmt == "letter":
            letter = str(one).strip().upper()
            if len(letter) != 1 or letter not in LETTERS[:len(choices)]:
                return None, f"expected a letter A-{LETTERS[len(choices) - 1]}, got {one!r}"
            picked.append(choices[LETTERS.index(letter)])
        else:
            text = str(one).strip()
            if not text.lstrip("-").isdigit() or not 0 <= int(text) < len(choices):
                return None, f"expected an index 0-{len(choices) - 1}, got {one!r}"
            picked.append(choices[int(text)])
    return (picked if isinstance(value, (list, tuple)) else picked[0]), None


def _plain(value: Any) -> Any:
    """JSON-able form of a cell (numpy scalars, tuples)."""
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def image_png(value: Any) -> bytes:
    """PNG bytes of an image cell; other formats are converted with Pillow when it is installed."""
    data = value
    if isinstance(value, dict):
        data = value.get("bytes")
        if data is None and value.get("path"):
            data = Path(value["path"]).read_bytes()
    elif isinstance(value, str):
        data = Path(value).read_bytes()
    elif hasattr(value, "save"):  # a PIL image
        import io

        buf = io.BytesIO()
        value.save(buf, format="PNG")
        return buf.getvalue()
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError(f"not an image (got {type(value).__name__})")
    if bytes(data).startswith(PNG_MAGIC):
        return bytes(data)
    try:
        import io

        from PIL import Image  # type: ignore[import-not-found]
    except ImportError:
        raise ValueError("not a PNG, and Pillow is not installed to convert it") from None
    buf = io.BytesIO()
    Image.open(io.BytesIO(bytes(data))).save(buf, format="PNG")
    return buf.getvalue()


def map_row(mapping: Mapping, row: dict[str, Any], number: int, name: str, default_section: str,
            save_image: Callable[[str, bytes], str] | None, warnings: list[str]) -> Item | None:
    """One row -> an Item, or None with the reasons in ``warnings``."""
    where = f"row {number}"
    item_id = str(_plain(row[mapping.id])) if mapping.id else f"{name}-{number}"
    type_ = str(row[mapping.type_column]) if mapping.type_column else mapping.type
    section = str(row[mapping.section_column]) if mapping.section_column else (mapping.section or default_section)
    native: dict[str, Any] = {"id": item_id, "type": type_, "inputs": {"text": _plain(row[mapping.prompt])}}
    source = {"inputs.text": mapping.prompt, "id": mapping.id or "id", "type": mapping.type_column or "type"}
    meta: dict[str, Any] = {}
    choices = _choices(mapping, row)
    if choices is not None and type_ in MCQ_TYPES:
        choices = [_plain(c) for c in choices]
        kept: list[Any] = []
        dropped = []
        for i, c in enumerate(choices):
            if c in kept:
                dropped.append(LETTERS[i])
            else:
                kept.append(c)
        native["choices"] = kept
        if dropped:
            meta["merged_duplicate_choices"] = dropped
    if mapping.answer:
        answer, problem = _answer(mapping, _plain(row[mapping.answer]), choices)
        if problem:
            warnings.append(f"{where}: {mapping.answer}: {problem}; row skipped")
            return None
        if answer is not None:
            native["answer"] = answer
    if mapping.checker is not None:
        native["checker"] = mapping.checker
    if mapping.criteria:
        values = {c: _plain(row[c]) for c in mapping.criteria}
        native["criteria"] = values[mapping.criteria[0]] if len(values) == 1 else values
    pairs = mapping.meta.items() if isinstance(mapping.meta, dict) else ((c, c) for c in mapping.meta)
    meta.update({key: _plain(row[col]) for key, col in pairs})
    if meta:
        native["meta"] = meta
    if mapping.image and row[mapping.image] is not None:
        try:
            png = image_png(row[mapping.image])
        except (ValueError, OSError) as e:
            warnings.append(f"{where}: {mapping.image}: {e}; row skipped")
            return None
        rel = f"images/{re.sub(r'[^A-Za-z0-9._-]', '_', item_id)}.png"
        native["inputs"]["images"] = [save_image(rel, png) if save_image else rel]
    item, problems = parse_item(native, section)
    for path, what in problems:
        column = source.get(path, mapping.answer if path.startswith("answer") else path)
        warnings.append(f"{where}: {column}: {what}; row skipped")
    return item
