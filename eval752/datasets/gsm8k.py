"""GSM8K importer: rows ``question, answer`` (worked solution ending ``#### N``) -> ``freeform`` items.

Each row becomes item ``gsm8k-<line>`` in a section named after the file's stem (``test``), with the
number after the last ``####`` (thousands commas removed) as ``answer``, checker ``numeric`` and the whole
solution in ``meta.solution``. A row without ``#### <number>`` is a warning and is skipped.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..types import Item
from .dataset import Dataset, make_dataset
from .jsonl import DEFAULT_MAX_LINE_BYTES
from .loader import stem_of
from .rows import read_rows, to_item

GSM8K_KEYS = ("question", "answer")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)")


def final_answer(solution: str) -> str | None:
    """``"... #### 1,234"`` -> ``"1234"``; None when there is no ``####`` followed by a number."""
    parts = solution.rsplit("####", 1)
    if len(parts) != 2:
        return None
    number = parts[1].strip().replace(",", "")
    return number if _NUMBER.fullmatch(number) else None


def import_gsm8k(path: str | Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> tuple[Dataset, list[str]]:
    given = str(path)
    section = stem_of(Path(path))
    warnings: list[str] = []
    items: list[Item] = []
    for line_no, row in read_rows(path, "GSM8K", GSM8K_KEYS, max_line_bytes=max_line_bytes):
        where = f"{given}:{line_no}"
        number = final_answer(row["answer"])
        if number is None:
            warnings.append(f"{where}: answer: no '#### <number>' at the end of the solution; row skipped")
            continue
        native = {
            "id": f"gsm8k-{line_no}",
            "type": "freeform",
            "inputs": {"text": row["question"]},
            "answer": number,
            "checker": "numeric",
            "meta": {"solution": row["answer"]},
        }
        item = to_item(native, section, where, {"inputs.text": "question"}, warnings)
        if item is not None:
            items.append(item)
    return make_dataset("gsm8k", None, items), warnings
