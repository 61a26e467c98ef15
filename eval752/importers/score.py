"""Score imported rows with the same checkers as a live run, and summarise them (overall and per model).

Each recorded response becomes one row of ``results.jsonl`` in eval752's own shape (``item_id, sample,
section, type, checker, request, response, verdict, status``) plus ``line`` (where it came from) and,
for files with several models, ``model``. A row whose item has no reference and no checker (a chat or
conversation row without ``ref_answer``) is written with ``verdict: null`` and ``unscored: true``, and
is left out of the metrics (``counts.unscored`` says how many); forcing a checker scores it anyway.
A null recorded response is a failed row (``status: error``), counted as wrong like a failed request.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..config import RunConfig, ScoreConfig
from ..metrics import summarise
from ..rundir import RESULTS, ResultsWriter
from ..types import Item, response_to_json, verdict_to_json
from . import read_records
from .common import Recorded
from .rollup import models_table


def _scorable(cfg: ScoreConfig, item: Item) -> bool:
    return cfg.checker.force is not None or item.checker is not None or item.answer is not None


def score_records(cfg: ScoreConfig, records: list[Recorded]) -> list[dict[str, Any]]:
    from ..app import CheckerChooser

    items: dict[str, Item] = {}
    for r in records:
        items.setdefault(r.item.id, r.item)
    chooser = CheckerChooser(RunConfig(checker=cfg.checker),
                             tuple(it for it in items.values() if _scorable(cfg, it)))
    rows: list[dict[str, Any]] = []

    async def go() -> None:
        for r in records:
            assert r.response is not None
            row: dict[str, Any] = {"item_id": r.item.id, "sample": r.sample, "section": r.item.section,
                                   "type": r.item.type, "checker": "", "line": r.line}
            if r.model is not None:
                row["model"] = r.model
            row["request"] = {"messages": list(r.messages), "params": dict(r.item.params)}
            row["response"] = response_to_json(r.response)
            row["verdict"] = None
            row["status"] = "ok" if r.response.ok else "error"
            if not _scorable(cfg, r.item):
                row["unscored"] = True
            elif r.response.ok:
                name, checker = chooser.for_item(r.item)
                row["checker"] = name
                row["verdict"] = verdict_to_json(await checker.acheck(r.item, r.response))
            rows.append(row)

    asyncio.run(go())
    return rows


def _write(rows: list[dict[str, Any]], path: Path) -> None:
    writer = ResultsWriter(path)
    try:
        for row in rows:
            writer.write(row)
    finally:
        writer.close()


def score_imported(cfg: ScoreConfig, input_path: Path, out_dir: Path, fmt: str) -> dict[str, Any]:
    """Import, score and write ``results.jsonl``; returns the summary's body."""
    if fmt in ("alpaca_annotations", "alpaca_outputs"):
        from .alpaca import annotation_rows, output_rows

        rows, summary = (annotation_rows if fmt == "alpaca_annotations" else output_rows)(input_path)
        _write(rows, out_dir / RESULTS)
        return summary
    rows = score_records(cfg, read_records(input_path, fmt))
    _write(rows, out_dir / RESULTS)
    scored = [r for r in rows if not r.get("unscored")]
    with_model = any("model" in r for r in rows)
    samples = 1 if with_model else max((r["sample"] for r in rows), default=0) + 1
    out = summarise(scored, samples=samples)
    out["counts"]["unscored"] = len(rows) - len(scored)
    if with_model:
        out["counts"]["samples"] = max((r["sample"] for r in rows), default=0) + 1
        out["models"] = models_table(scored)
        out["note"] = "metrics pool every model's responses; per-model figures are under models"
    return out
