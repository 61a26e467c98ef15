"""Importers: recorded outputs in foreign formats -> ``Item`` + ``Response`` for the same checkers.

One module per format: ``chat`` (messages + ref_answer), ``conversation`` (system + prompt/response
turns), ``evalonly`` (several models, n responses each), ``csvfile`` (prompt, answer[, response]) and
``alpaca`` (AlpacaEval annotations and model outputs). ``detect`` tells them apart (``format=auto``);
``rollup`` gives the per-model table. eval752's own results and verifier rows are read by
``eval752.scoring`` and ``eval752.verifier``.

Every row format except the AlpacaEval files can also be run live: ``items_from_file(path, format)``
gives the items (the messages up to the last user turn are the prompt: the last user turn is
``Item.text``, the whole prompt is ``meta["messages"]``), and ``dataset.format=chat|conversation|eval_only|
csv`` loads them through the ``eval752`` dataset loader.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import ConfigError
from ..types import Item
from .chat import read_chat
from .common import Recorded
from .conversation import read_conversation
from .csvfile import csv_to_items, read_csv
from .detect import FORMATS, detect_format
from .evalonly import read_eval_only

READERS: dict[str, Callable[..., list[Recorded]]] = {
    "chat": read_chat,
    "conversation": read_conversation,
    "eval_only": read_eval_only,
    "csv": read_csv,
}
LIVE_FORMATS = tuple(READERS)


def read_records(path: str | Path, format: str, *, live: bool = False) -> list[Recorded]:
    """The rows of a chat, conversation, eval-only or CSV file, as items with their recorded responses."""
    if format not in READERS:
        raise ConfigError(f"format {format!r} has no row importer; choose one of {', '.join(READERS)}")
    return READERS[format](Path(path), live=live)


def items_from_file(path: str | Path, format: str = "auto") -> list[Item]:
    """The items of a chat, conversation, eval-only or CSV file, ready to run live (one per row)."""
    if format == "auto":
        format = detect_format(Path(path))
    items: dict[str, Item] = {}
    for r in read_records(path, format, live=True):
        items.setdefault(r.item.id, r.item)
    return list(items.values())


def dataset_from_file(path: str | Path, format: str):
    """A ``Dataset`` (one section, named after the file) for ``load_any``."""
    from dataclasses import replace

    from ..datasets.dataset import make_dataset

    p = Path(path)
    name = p.name.split(".")[0] or "dataset"
    return make_dataset(name, None, [replace(it, section=name) for it in items_from_file(p, format)])


__all__ = ["FORMATS", "LIVE_FORMATS", "Recorded", "csv_to_items", "dataset_from_file", "detect_format",
           "items_from_file", "read_records"]
