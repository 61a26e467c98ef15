"""Shared plumbing for importers: read a foreign JSONL(.gz) file's rows and turn them into native items.

An importer's rows are read with the same safe reader as native datasets. Structural problems (a line that
is not JSON or not an object, a row missing a key the format needs, a value of the wrong type) raise
``DatasetError`` with every such problem; if the *first* row lacks the format's keys the file is not in that
format at all, and ``InputFormatError`` names the keys expected. Rows that are well formed but unusable
(junk values, an empty question) become warnings ``file:line: field: what; row skipped`` and are left out:
never silently kept, never a crash.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..errors import DatasetError, InputFormatError
from ..types import Item
from .jsonl import DEFAULT_MAX_LINE_BYTES, LineProblem, iter_jsonl, json_type
from .native import parse_item


def read_rows(
    path: str | Path,
    format_name: str,
    required: tuple[str, ...],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> list[tuple[int, dict[str, Any]]]:
    """Every row as ``(line_no, dict)``; all required keys present with string values."""
    given = str(path)
    if not Path(path).is_file():
        raise DatasetError([f"{given}:-: -: no such file"])
    rows: list[tuple[int, dict[str, Any]]] = []
    problems: list[str] = []
    for line_no, value in iter_jsonl(path, max_line_bytes=max_line_bytes):
        if isinstance(value, LineProblem):
            problems.append(value.format(given, line_no))
            continue
        if not isinstance(value, dict):
            problems.append(f"{given}:{line_no}: -: expected a JSON object, got {json_type(value)}")
            continue
        missing = [key for key in required if key not in value]
        if missing and not rows and not problems:
            raise InputFormatError(
                f"{given}:{line_no}: not a {format_name} file: expected rows with keys "
                f"{', '.join(required)}; the first row has keys {', '.join(value) or '(none)'}"
            )
        row_problems = [f"{given}:{line_no}: {key}: required field is missing" for key in missing]
        row_problems += [
            f"{given}:{line_no}: {key}: expected a string, got {json_type(value[key])}"
            for key in required
            if key in value and not isinstance(value[key], str)
        ]
        problems.extend(row_problems)
        if not row_problems:
            rows.append((line_no, value))
    if problems:
        raise DatasetError(problems)
    if not rows:
        raise DatasetError([f"{given}:-: -: file has no rows"])
    return rows


def to_item(
    native: dict[str, Any],
    section: str,
    where: str,
    source_fields: Mapping[str, str],
    warnings: list[str],
) -> Item | None:
    """Validate a converted row as a native item; on problems add warnings (in source field names)."""
    item, problems = parse_item(native, section)
    for field, what in problems:
        warnings.append(f"{where}: {source_fields.get(field, field)}: {what}; row skipped")
    return item
