"""MMLU importer: rows ``question, answer_a..answer_d, correct_answer (A-D), topic`` -> ``mcq_single`` items.

Each row becomes item ``mmlu-<line>`` (1-based line of the file) in section ``<topic>``, with the four
answers as choices, the correct answer's text as ``answer`` and ``meta.topic``. Decisions:

* ``correct_answer`` must be A, B, C or D (surrounding spaces and lower case are tolerated). Any other
  row is a warning and is skipped: the published file holds two CSV header rows read as data
  (``correct_answer == "answer"``), and they are reported, not kept.
* Duplicate answer texts within a row (9 rows of the published test set, e.g. ``['687', '687', ...]``)
  are merged: the choice is listed once, at its first position, and ``meta.merged_duplicate_choices``
  names the letters that were dropped. The correct answer's text is unchanged by this (identical texts
  are the same answer), native validation keeps requiring distinct choices, and no warning is given
  because nothing is lost.
"""
from __future__ import annotations

from pathlib import Path

from ..types import Item
from .dataset import Dataset, make_dataset
from .jsonl import DEFAULT_MAX_LINE_BYTES
from .rows import read_rows, to_item

LETTERS = ("A", "B", "C", "D")
ANSWER_KEYS = ("answer_a", "answer_b", "answer_c", "answer_d")
MMLU_KEYS = ("question", *ANSWER_KEYS, "correct_answer", "topic")


def import_mmlu(path: str | Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> tuple[Dataset, list[str]]:
    given = str(path)
    warnings: list[str] = []
    items: list[Item] = []
    for line_no, row in read_rows(path, "MMLU", MMLU_KEYS, max_line_bytes=max_line_bytes):
        where = f"{given}:{line_no}"
        letter = row["correct_answer"].strip().upper()
        if letter not in LETTERS:
            warnings.append(
                f"{where}: correct_answer: expected one of A, B, C, D, got {row['correct_answer']!r}; row skipped"
            )
            continue
        choices: list[str] = []
        source_fields = {"inputs.text": "question", "meta.topic": "topic"}
        dropped: list[str] = []
        for key, choice_letter in zip(ANSWER_KEYS, LETTERS):
            text = row[key]
            if text in choices:
                dropped.append(choice_letter)
            else:
                source_fields[f"choices[{len(choices)}]"] = key
                choices.append(text)
        meta: dict[str, object] = {"topic": row["topic"]}
        if dropped:
            meta["merged_duplicate_choices"] = dropped
        if not row["topic"].strip():
            warnings.append(f"{where}: topic: must not be empty; row skipped")
            continue
        native = {
            "id": f"mmlu-{line_no}",
            "type": "mcq_single",
            "inputs": {"text": row["question"]},
            "choices": choices,
            "answer": row[ANSWER_KEYS[LETTERS.index(letter)]],
            "meta": meta,
        }
        item = to_item(native, row["topic"], where, source_fields, warnings)
        if item is not None:
            items.append(item)
    return make_dataset("mmlu", None, items), warnings
