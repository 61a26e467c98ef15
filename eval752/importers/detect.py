"""Which format a recorded-outputs file is in (``format=auto``), from its name and its first row.

* a name ending in ``.csv``: ``csv``;
* a JSON array (plain or gzipped): its first element decides: ``output_1, output_2, preference`` ->
  ``alpaca_annotations``; ``instruction, output, generator`` -> ``alpaca_outputs``;
* otherwise JSON Lines (plain or gzipped), by the keys of the first object, in this order:
  ``item_id, sample, response, status`` -> ``eval752``; ``data_index`` with ``response`` or
  ``finish_reason`` -> ``verifier``; ``model_outputs`` -> ``eval_only``; ``conversation`` ->
  ``conversation``; ``messages`` ending with an assistant turn, or ``messages`` with ``ref_answer`` ->
  ``chat``; anything else -> ``jsonl`` (diagnostics only; e.g. prompt files whose last turn is the user's).
"""
from __future__ import annotations

import gzip
from pathlib import Path

from ..errors import InputFormatError
from .common import jsonl_rows

FORMATS = ("auto", "eval752", "verifier", "jsonl", "chat", "conversation", "eval_only", "csv",
           "alpaca_annotations", "alpaca_outputs")
ANNOTATION_SIGNATURE = ("output_1", "output_2", "preference")
OUTPUTS_SIGNATURE = ("instruction", "output", "generator")


def _head(path: Path, size: int = 4096) -> bytes:
    with open(path, "rb") as f:
        raw = f.read(2)
    opener = gzip.open if raw == b"\x1f\x8b" else open
    try:
        with opener(path, "rb") as f:
            return f.read(size)
    except (OSError, EOFError) as e:
        raise InputFormatError(f"{path}: cannot read: {e}") from None


def _array_format(path: Path) -> str:
    from ..datasets.alpaca_eval import _read_array

    rows = _read_array(path, "AlpacaEval rows")
    first = rows[0] if rows else None
    keys = list(first) if isinstance(first, dict) else []
    if all(k in keys for k in ANNOTATION_SIGNATURE):
        return "alpaca_annotations"
    if all(k in keys for k in OUTPUTS_SIGNATURE):
        return "alpaca_outputs"
    raise InputFormatError(
        f"{path}:[0]: -: a JSON array whose first element has keys {keys or '(none)'}; expected AlpacaEval "
        f"annotations ({', '.join(ANNOTATION_SIGNATURE)}) or model outputs ({', '.join(OUTPUTS_SIGNATURE)})")


def row_format(row: dict) -> str:
    if {"item_id", "sample", "response", "status"} <= row.keys():
        return "eval752"
    if "data_index" in row and ("response" in row or "finish_reason" in row):
        return "verifier"
    if "model_outputs" in row:
        return "eval_only"
    if "conversation" in row:
        return "conversation"
    messages = row.get("messages")
    if isinstance(messages, list) and messages:
        last = messages[-1]
        if "ref_answer" in row or (isinstance(last, dict) and last.get("role") == "assistant"):
            return "chat"
    return "jsonl"


def detect_format(path: Path) -> str:
    path = Path(path)
    if path.name.lower().endswith(".csv"):
        return "csv"
    head = _head(path).lstrip()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    if head.startswith(b"["):
        return _array_format(path)
    for _, row in jsonl_rows(path, "recorded outputs"):
        return row_format(row)
    raise InputFormatError(f"{path}: the file has no rows")

