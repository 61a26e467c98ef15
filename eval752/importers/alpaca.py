"""AlpacaEval files (JSON arrays, optionally gzipped; see ``eval752.datasets.alpaca_eval``).

* Annotations (``instruction, output_1, generator_1, output_2, generator_2, preference``): one scored row
  per annotation, the model being ``generator_2`` and its verdict the judge's preference (score =
  ``preference - 1``: 1 the model won, 0 the baseline won, 0.5 a tie; null preferences are unscored).
  Per model: AlpacaEval's win rate, standard error, wins, losses, draws and discrete win rate
  (``eval752.arena.win_rate``), reproducing the official leaderboard figures.
* Model outputs (``instruction, output, generator``): there is no reference and no judge, so rows are
  imported for the diagnostics (grouped by generator) and counted per generator; nothing is scored.
  Pairwise judging of two output files is not wired yet.

Rows are numbered by their index in the array (``line`` is that index, messages show it as ``[i]``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

def annotation_rows(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(result rows, {"baseline": ..., "models": {generator_2: win-rate metrics}})``."""
    from ..arena import win_rate
    from ..datasets.alpaca_eval import load_alpaca_annotations, preferences_by_model

    annotations = load_alpaca_annotations(path)
    rows = []
    for i, a in enumerate(annotations):
        p = a["preference"]
        verdict = None if p is None else {
            "score": p - 1.0, "passed": p > 1.5, "reason": f"preference {p:g} (1 baseline, 2 model, 1.5 tie)",
            "extracted": p, "answered": True, "details": {}}
        rows.append({
            "item_id": str(i), "sample": 0, "section": a.get("dataset") or "", "type": "judge_pairwise",
            "checker": "alpaca_eval_annotation", "model": a["generator_2"], "baseline": a["generator_1"],
            "request": {"messages": [{"role": "user", "content": a["instruction"]}]},
            "response": {"text": a["output_2"]}, "verdict": verdict, "status": "ok"})
    models: dict[str, Any] = {}
    for name, prefs in preferences_by_model(annotations).items():
        wr = win_rate(prefs)
        n = wr.n_total
        models[name] = {key: {"value": value, "num": n} for key, value in wr.to_json().items()
                        if key not in ("n_total", "n_inconsistent")}
    unjudged = sum(1 for a in annotations if a["preference"] is None)
    baselines = sorted({a["generator_1"] for a in annotations})
    return rows, {"baseline": baselines[0] if len(baselines) == 1 else baselines, "models": models,
                  "counts": {"rows": len(rows), "unjudged": unjudged}}


def output_rows(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(rows for the diagnostics, {"models": {generator: {"outputs": {value, num}}}})``."""
    from ..datasets.alpaca_eval import load_alpaca_outputs

    outputs = load_alpaca_outputs(path)
    rows, counts = [], {}
    for i, o in enumerate(outputs):
        counts[o["generator"]] = counts.get(o["generator"], 0) + 1
        rows.append({
            "item_id": str(i), "sample": 0, "section": o.get("dataset") or "", "type": "freeform",
            "checker": "", "model": o["generator"],
            "request": {"messages": [{"role": "user", "content": o["instruction"]}]},
            "response": {"text": o["output"]}, "verdict": None, "status": "ok"})
    models = {g: {"outputs": {"value": n, "num": n}} for g, n in counts.items()}
    return rows, {"models": models, "counts": {"rows": len(rows), "unscored": len(rows)},
                  "note": "model outputs carry no reference: diagnostics only"}
