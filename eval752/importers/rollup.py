"""Per-model results when one file holds several models, each with n responses per item.

For each model, over the items it answered (sample ``i`` = its ``i``-th response to an item):

* ``score``: the mean score of every response (``num`` = responses; failed responses count as wrong);
* ``best_of_n``: the mean over items of the best score among the item's responses (``num`` = items;
  ``n`` = the most responses any item has);
* ``pass@k`` for every k from 1 to n: the unbiased estimator (``eval752.metrics.pass_at_k``, a response
  passes at score 1.0) averaged over the items with at least k responses (``num`` = those items);
* ``spread``: the sample standard deviation (0.0 for one sample index) of the per-sample-index means
  (the mean score of every item's response ``i``), with their ``min``, ``max`` and the ``means``;
  ``num`` = the number of sample indices.

Values are rounded to 6 decimals, like every summary metric.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Iterable, Mapping

from ..metrics import mean_ci, metric, pass_at_k, score_metric


def _score(row: Mapping[str, Any]) -> float:
    v = row.get("verdict")
    return float(v["score"]) if row.get("status") == "ok" and v else 0.0


def model_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One model's rows (already scored) -> its metrics table."""
    per_item: dict[str, dict[int, float]] = defaultdict(dict)
    for r in rows:
        per_item[str(r["item_id"])][int(r.get("sample", 0))] = _score(r)
    all_scores = [s for samples in per_item.values() for s in samples.values()]
    n = max((len(s) for s in per_item.values()), default=0)
    out: dict[str, Any] = {"score": score_metric(all_scores)}
    best = [max(s.values()) for s in per_item.values() if s]
    out["best_of_n"] = metric(round(statistics.fmean(best), 6) if best else None, len(best), n=n)
    for k in range(1, n + 1):
        vals = [pass_at_k(len(s), sum(1 for x in s.values() if x >= 1.0), k) for s in per_item.values() if len(s) >= k]
        out[f"pass@{k}"] = metric(round(statistics.fmean(vals), 6) if vals else None, len(vals), mean_ci(vals))
    by_index: dict[int, list[float]] = defaultdict(list)
    for samples in per_item.values():
        for i, s in samples.items():
            by_index[i].append(s)
    means = [statistics.fmean(by_index[i]) for i in sorted(by_index)]
    if means:
        std = statistics.stdev(means) if len(means) > 1 else 0.0
        out["spread"] = metric(round(std, 6), len(means), min=round(min(means), 6), max=round(max(means), 6),
                               means=[round(m, 6) for m in means])
    return out


def models_table(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{model: metrics}`` for rows that carry a ``model``, models in order of first appearance."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("model") is not None:
            groups.setdefault(str(r["model"]), []).append(r)
    return {name: model_metrics(rs) for name, rs in groups.items()}


def format_models_table(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The per-model table as printed lines: one row per model, one column per metric."""
    if not models:
        return []
    columns: list[str] = []
    for m in models.values():
        columns += [c for c in m if c not in columns]
    width = max(12, *(len(n) + 2 for n in models))
    head = f"  {'model':<{width}}" + "".join(f"{c:>{max(12, len(c) + 2)}}" for c in columns)
    lines = [head]
    for name, m in models.items():
        cells = []
        for c in columns:
            v = (m.get(c) or {}).get("value")
            text = "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))
            cells.append(f"{text:>{max(12, len(c) + 2)}}")
        lines.append(f"  {name:<{width}}" + "".join(cells))
    return lines
