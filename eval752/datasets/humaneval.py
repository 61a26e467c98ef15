"""HumanEval importer: rows ``task_id, prompt, entry_point, canonical_solution, test`` -> ``code`` items.

Each row becomes item ``<task_id>`` in a section named after the file's stem (``HumanEval``): text = the
prompt, answer = the canonical solution, checker ``code``, and ``meta`` = ``{entry_point, test, prompt}``
(what a code checker needs to run ``check(entry_point)``). A repeated ``task_id`` is a warning and the
later row is skipped.
"""
from __future__ import annotations

from pathlib import Path

from ..types import Item
from .dataset import Dataset, make_dataset
from .jsonl import DEFAULT_MAX_LINE_BYTES
from .loader import stem_of
from .rows import read_rows, to_item

HUMANEVAL_KEYS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")


def import_humaneval(
    path: str | Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> tuple[Dataset, list[str]]:
    given = str(path)
    section = stem_of(Path(path))
    warnings: list[str] = []
    items: list[Item] = []
    first_at: dict[str, int] = {}
    for line_no, row in read_rows(path, "HumanEval", HUMANEVAL_KEYS, max_line_bytes=max_line_bytes):
        where = f"{given}:{line_no}"
        task_id = row["task_id"]
        if task_id in first_at:
            warnings.append(f"{where}: task_id: duplicate id {task_id!r} (first at line {first_at[task_id]}); "
                            "row skipped")
            continue
        native = {
            "id": task_id,
            "type": "code",
            "inputs": {"text": row["prompt"]},
            "answer": row["canonical_solution"],
            "checker": "code",
            "meta": {"entry_point": row["entry_point"], "test": row["test"], "prompt": row["prompt"]},
        }
        item = to_item(native, section, where, {"id": "task_id", "inputs.text": "prompt"}, warnings)
        if item is not None:
            first_at[task_id] = line_no
            items.append(item)
    return make_dataset("humaneval", None, items), warnings
