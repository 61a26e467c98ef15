"""AlpacaEval files: pairwise annotations (``*.annotations.json[.gz]``) and model outputs
(``*.model_outputs.json[.gz]``). Both are one JSON array of objects; gzip is recognised by its magic bytes.

Annotations need the strings ``instruction, output_1, generator_1, output_2, generator_2`` and
``preference``: a number in [1, 2] (1 = ``output_1``, the baseline, is better; 2 = ``output_2``, the
model; 1.5 = tie), or null (or NaN) when the judge gave none: both load as None. Model outputs need the
strings ``instruction, output, generator``; ``dataset`` is optional. Other fields are kept as they are.
Anything else raises ``InputFormatError`` naming the file, the index in the array and the field.
"""
from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

from ..errors import InputFormatError
from .jsonl import json_type

ANNOTATION_KEYS = ("instruction", "output_1", "generator_1", "output_2", "generator_2")
OUTPUT_KEYS = ("instruction", "output", "generator")


def _read_array(path: str | Path, what: str) -> list[Any]:
    given = str(path)
    try:
        raw = Path(path).read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        value = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise InputFormatError(f"{given}: no such file") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputFormatError(f"{given}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InputFormatError(f"{given}: not UTF-8 text: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"{given}: not valid JSON: {exc}") from None
    if not isinstance(value, list):
        raise InputFormatError(f"{given}: expected a JSON array of {what}, got {json_type(value)}")
    return value


def _check_row(given: str, index: int, row: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise InputFormatError(f"{given}: [{index}]: expected an object, got {json_type(row)}")
    for key in keys:
        if key not in row:
            raise InputFormatError(f"{given}: [{index}] {key}: required field is missing")
        if not isinstance(row[key], str):
            raise InputFormatError(f"{given}: [{index}] {key}: expected a string, got {json_type(row[key])}")
    return dict(row)


def load_alpaca_annotations(path: str | Path) -> list[dict[str, Any]]:
    """The annotations in file order; ``preference`` is a float in [1, 2] or None."""
    given = str(path)
    rows = []
    for index, raw in enumerate(_read_array(path, "annotations")):
        row = _check_row(given, index, raw, ANNOTATION_KEYS)
        if "preference" not in row:
            raise InputFormatError(f"{given}: [{index}] preference: required field is missing")
        p = row["preference"]
        if isinstance(p, float) and math.isnan(p):  # pandas writes a missing judgement as NaN
            p = row["preference"] = None
        if p is not None:
            if isinstance(p, bool) or not isinstance(p, (int, float)):
                raise InputFormatError(f"{given}: [{index}] preference: expected a number in [1, 2] or null, "
                                       f"got {json_type(p)}")
            if not 1.0 <= p <= 2.0:
                raise InputFormatError(f"{given}: [{index}] preference: {p!r} is outside [1, 2]")
            row["preference"] = float(p)
        rows.append(row)
    return rows


def load_alpaca_outputs(path: str | Path) -> list[dict[str, Any]]:
    """The model outputs in file order."""
    given = str(path)
    rows = []
    for index, raw in enumerate(_read_array(path, "model outputs")):
        row = _check_row(given, index, raw, OUTPUT_KEYS)
        if "dataset" in row and not isinstance(row["dataset"], str):
            raise InputFormatError(f"{given}: [{index}] dataset: expected a string, got {json_type(row['dataset'])}")
        rows.append(row)
    return rows


def preferences_by_model(annotations: list[dict[str, Any]]) -> dict[str, list[float]]:
    """``generator_2`` -> its preferences against the baseline, in order; null preferences are left out."""
    out: dict[str, list[float]] = {}
    for row in annotations:
        if row["preference"] is not None:
            out.setdefault(row["generator_2"], []).append(row["preference"])
    return out
