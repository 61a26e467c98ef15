"""Plain CSV: a header row with ``prompt`` and ``answer`` columns, and optionally ``response`` (the
recorded answer to score), ``id``, ``type``, ``choices`` (options separated by ``|``) and the generation
parameters. Other columns go to the item's meta as strings. Without a ``response`` column the file is a
dataset to run live (``csv_to_items``); scoring it is an error. Lines are the file's physical lines (a
quoted field may span several)."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..types import Item
from .common import PARAM_KEYS, Recorded, check_unique, fail, make_item, response_of

REQUIRED = ("prompt", "answer")
NUMERIC = {"max_tokens": int, "top_k": int, "seed": int, "temperature": float, "top_p": float}


def _row_fields(path: Path, line: int, row: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {k: v for k, v in row.items() if k not in ("prompt", "response")}
    for key in PARAM_KEYS:
        value = fields.get(key)
        if value in (None, ""):
            fields.pop(key, None)
        elif key in NUMERIC:
            try:
                fields[key] = NUMERIC[key](value)
            except ValueError:
                raise fail(path, line, key, f"expected a number, got {value!r}") from None
    if fields.get("choices"):
        fields["choices"] = [c.strip() for c in fields["choices"].split("|")]
    else:
        fields.pop("choices", None)
    for key in ("id", "type", "answer"):
        if fields.get(key) == "":
            fields.pop(key)
    return fields


def read_csv(path: Path, *, live: bool = False) -> list[Recorded]:
    out = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise fail(path, 1, ",".join(missing), f"missing column; expected a header with prompt and answer "
                           f"(optional: response, id, type, choices), got {header}")
            if not live and "response" not in header:
                raise fail(path, 1, "response", "no response column: this CSV is a dataset to run live "
                           "(eval752.importers.csv_to_items), not recorded outputs to score")
            start = 2
            for row in reader:
                line = start
                start = reader.line_num + 1
                if None in row or any(v is None for v in row.values()):
                    raise fail(path, line, "-", f"expected {len(header)} columns, got another number")
                item = make_item(path, line, _row_fields(path, line, row), row["prompt"])
                prompt = ({"role": "user", "content": row["prompt"]},)
                out.append(Recorded(item, prompt, None if live else response_of(row["response"]), line))
    except UnicodeDecodeError as e:
        raise fail(path, "-", "-", f"not UTF-8 text ({e})") from None
    except csv.Error as e:
        raise fail(path, "-", "-", f"not valid CSV ({e})") from None
    return check_unique(path, out)


def csv_to_items(path: str | Path) -> list[Item]:
    """The items of a CSV with prompt and answer columns, to run live (a ``response`` column is ignored)."""
    return [r.item for r in read_csv(Path(path), live=True)]
