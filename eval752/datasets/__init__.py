"""Datasets: the native JSONL format, its loader and writer, and importers for public benchmarks.

``load_dataset`` reads the native format (see ``native.py`` for the item fields and ``loader.py`` for the
layouts); ``import_mmlu``, ``import_gsm8k`` and ``import_humaneval`` turn published files into the same
``Dataset``; ``load_any`` picks one of them. ``iter_jsonl`` is the safe line reader they all share.
"""
from .dataset import Dataset, make_dataset, write_dataset
from .detect import FORMATS, detect_format, load_any
from .gsm8k import import_gsm8k
from .humaneval import import_humaneval
from .jsonl import LineProblem, iter_jsonl
from .loader import load_dataset
from .mmlu import import_mmlu
from .native import parse_item

__all__ = [
    "FORMATS",
    "Dataset",
    "LineProblem",
    "detect_format",
    "import_gsm8k",
    "import_humaneval",
    "import_mmlu",
    "iter_jsonl",
    "load_any",
    "load_dataset",
    "make_dataset",
    "parse_item",
    "write_dataset",
]
