"""``load_any``: one entrance for every dataset format, detected from the first row when asked to.

Detection (``format="auto"``): a folder is native; otherwise the keys of the file's first JSON object
decide: ``id, type, inputs`` -> native, ``question, answer_a..answer_d, correct_answer, topic`` -> mmlu,
``task_id, prompt, entry_point, canonical_solution, test`` -> humaneval, ``question, answer`` -> gsm8k.
A file whose first line is not an object is handed to the native loader, which reports it precisely.
``builtin:<file>`` names a dataset shipped in ``eval752/data/``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError, DatasetError, InputFormatError
from ..registry import unknown_name_message
from .dataset import Dataset
from .gsm8k import GSM8K_KEYS, import_gsm8k
from .humaneval import HUMANEVAL_KEYS, import_humaneval
from .jsonl import DEFAULT_MAX_LINE_BYTES, LineProblem, iter_jsonl
from .loader import filter_sections, load_dataset, select
from .mmlu import MMLU_KEYS, import_mmlu

FORMATS = ("auto", "native", "mmlu", "gsm8k", "humaneval")
NATIVE_KEYS = ("id", "type", "inputs")
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "data"
# Checked in this order: MMLU rows also have a "question", so MMLU comes before GSM8K.
SIGNATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("native", NATIVE_KEYS),
    ("mmlu", MMLU_KEYS),
    ("humaneval", HUMANEVAL_KEYS),
    ("gsm8k", GSM8K_KEYS),
)
IMPORTERS: dict[str, Callable[..., tuple[Dataset, list[str]]]] = {
    "mmlu": import_mmlu,
    "gsm8k": import_gsm8k,
    "humaneval": import_humaneval,
}


def resolve_path(path: str | Path) -> Path:
    text = str(path)
    if text.startswith("builtin:"):
        return BUILTIN_DIR / text[len("builtin:"):]
    return Path(path)


def detect_format(path: str | Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> str:
    """The format of a dataset path, from its layout or its first row; InputFormatError when unknown."""
    path = Path(path)
    if path.is_dir():
        return "native"
    if not path.is_file():
        raise DatasetError([f"{path}:-: -: no such file or folder"])
    first: Any = None
    line_no = 0
    for line_no, value in iter_jsonl(path, max_line_bytes=max_line_bytes):
        first = value
        if not (isinstance(value, LineProblem) and value.message.startswith("file starts with")):
            break
    if not isinstance(first, dict):
        return "native"
    for name, keys in SIGNATURES:
        if all(key in first for key in keys):
            return name
    expected = "; ".join(f"{name}: {', '.join(keys)}" for name, keys in SIGNATURES)
    raise InputFormatError(
        f"{path}:{line_no}: cannot tell the dataset format from the first row (keys: "
        f"{', '.join(first) or '(none)'}); expected the keys of one of: {expected}"
    )


def load_any(
    path: str | Path,
    format: str = "auto",
    *,
    sections: list[str] | None = None,
    limit: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> tuple[Dataset, list[str]]:
    """Load a dataset in any supported format; returns ``(dataset, warnings)``."""
    if format in ("chat", "conversation", "eval_only", "csv"):  # recorded-output rows run live (eval752.importers)
        from ..importers import dataset_from_file

        return select(dataset_from_file(resolve_path(path), format), limit=limit), []
    if format not in FORMATS:
        raise ConfigError(unknown_name_message("dataset format", format, list(FORMATS)))
    resolved = resolve_path(path)
    shown = str(path) if resolved == Path(path) else str(resolved)
    if format == "auto":
        format = detect_format(shown, max_line_bytes=max_line_bytes)
    if format == "native":
        return load_dataset(shown, sections=sections, limit=limit, max_line_bytes=max_line_bytes), []
    dataset, warnings = IMPORTERS[format](shown, max_line_bytes=max_line_bytes)
    chosen, problems = filter_sections(shown, list(dataset.sections), sections)
    if problems:
        raise DatasetError(problems)
    if sections is not None:
        keep = set(chosen)
        dataset = Dataset(
            name=dataset.name,
            root=dataset.root,
            items=tuple(item for item in dataset.items if item.section in keep),
            sections=tuple(chosen),
        )
    if not dataset.items:
        raise DatasetError([f"{shown}:-: -: dataset has no items"])
    return select(dataset, limit=limit), warnings
