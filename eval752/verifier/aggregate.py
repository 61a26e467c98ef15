"""Across loops: trigger similarity against an official baseline, upstream's ``metrics_report.json``,
and eval752's mean/spread/verdict per metric.

Upstream metric formulas (``calculate_metrics`` of its batch script), one value per loop summary:

1. Query-Success-Rate = success_count / all_count (0 when all_count is 0)
2. ToolCalls-Match-Rate = (TP + TN) / denominator; the denominator is the prompt file's labelled-row count
   when given, else ``expected_tool_call_total_count``, else ``success_count``
3. ToolCalls-Trigger-Similarity = F1 of "ends in a tool call" against the official rows (only with a baseline)
4. ToolCalls-Schema-Accuracy = tool_calls_successful_count / TP (0 when TP is 0)
5. Error-Only-Reasoning-Rate = error_only_reasoning_count / error_only_reasoning_checked_count
6. Language-Following-Success-Rate = valid / checked (0 when nothing was checked)
7. Scenario-Check-Pass-Rate = valid / checked (left out when nothing was checked)

Averages are unweighted means over loops (3 and 7 over the loops that have them), summed as CPython 3.12+
``sum`` does (see ``compensated_sum``).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .rows import pair_by_data_index
from .summary import summary_metrics
from .responses import finish_reason_of

QUERY = "1. Query-Success-Rate"
MATCH = "2. ToolCalls-Match-Rate"
TRIGGER = "3. ToolCalls-Trigger-Similarity"
SCHEMA = "4. ToolCalls-Schema-Accuracy"
EOR = "5. Error-Only-Reasoning-Rate"
LANGUAGE = "6. Language-Following-Success-Rate"
SCENARIO = "7. Scenario-Check-Pass-Rate"
REPORT_ORDER = (QUERY, MATCH, TRIGGER, SCHEMA, EOR, LANGUAGE, SCENARIO)
_OPTIONAL = (TRIGGER, SCENARIO)  # left out of a loop's metrics when None


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0


def upstream_loop_metrics(
    summary: Mapping[str, Any], *, expected_total: int | None = None, trigger_f1: float | None = None
) -> dict[str, Any]:
    """One loop's numbered metrics, unrounded, in report order; None-valued optional metrics are dropped."""
    g = summary.get
    tp = g("tool_calls_finish_tool_calls", 0)
    if expected_total:
        den = expected_total
    elif g("expected_tool_call_total_count", 0) > 0:
        den = g("expected_tool_call_total_count")
    else:
        den = g("success_count", 0)
    checked = g("scenario_check_checked_count", 0)
    values = {
        QUERY: _ratio(g("success_count", 0), g("all_count", 0)),
        MATCH: _ratio(tp + g("stop_finish_stop", 0), den),
        TRIGGER: trigger_f1,
        SCHEMA: _ratio(g("tool_calls_successful_count", 0), tp),
        EOR: _ratio(g("error_only_reasoning_count", 0), g("error_only_reasoning_checked_count", 0)),
        LANGUAGE: _ratio(g("language_following_valid_count", 0), g("language_following_checked_count", 0)),
        SCENARIO: g("scenario_check_valid_count", 0) / checked if checked > 0 else None,
    }
    return {k: v for k, v in values.items() if not (k in _OPTIONAL and v is None)}


def compensated_sum(values: Sequence[float]) -> float:
    """The sum CPython 3.12+ ``sum()`` returns, on any Python: integers are added exactly until the first
    float, floats are then added with Neumaier's compensation (the running error is added once at the
    end), integers after that plainly. Upstream's reports were made with that ``sum``: on Python 3.11 a
    left-to-right sum of the M2.5 match rates gives 0.9830000000000002 where the file says 0.983."""
    items = list(values)
    k, exact = 0, 0
    while k < len(items) and isinstance(items[k], int):
        exact += items[k]
        k += 1
    if k == len(items):
        return exact
    total = exact + items[k]
    comp = 0.0
    for x in items[k + 1 :]:
        if isinstance(x, int):
            total += float(x)
            continue
        t = total + x
        comp += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    if comp and math.isfinite(comp):
        total += comp
    return total


def mean(values: Sequence[float]) -> float:
    """Unweighted mean as upstream computes it: ``sum(values) / len(values)`` with 3.12+ ``sum``."""
    return compensated_sum(values) / len(values)


def build_metrics_report(
    loop_summaries: Sequence[Mapping[str, Any]],
    *,
    files: Sequence[str] | None = None,
    expected_total: int | None = None,
    similarities: Sequence[Mapping[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """Upstream's ``metrics_report.json`` for L loop summaries (in loop order). ``files`` names each loop's
    summary file; ``similarities`` holds each loop's ``trigger_similarity`` result (or None)."""
    files = list(files) if files is not None else [f"loop_{i + 1:02d}" for i in range(len(loop_summaries))]
    sims = list(similarities) if similarities is not None else [None] * len(loop_summaries)
    if len(files) != len(loop_summaries) or len(sims) != len(loop_summaries):
        raise ValueError("files and similarities need one entry per loop summary")
    results: list[dict[str, Any]] = []
    for path, summary, sim in zip(files, loop_summaries, sims):
        metrics = upstream_loop_metrics(summary, expected_total=expected_total, trigger_f1=sim["f1"] if sim else None)
        entry: dict[str, Any] = {"file": path, "model": summary.get("model", "Unknown"), "metrics": metrics}
        if sim:
            entry["toolcalls_trigger_similarity"] = dict(sim)
        results.append(entry)
    average: dict[str, Any] = {}
    if results:
        for key in REPORT_ORDER:
            values = [r["metrics"][key] for r in results if r["metrics"].get(key) is not None]
            if key in _OPTIONAL and not values:
                continue
            average[key] = mean(values if key in _OPTIONAL else [r["metrics"][key] for r in results])
    return {"summary": {"total_files": len(results), "average_metrics": average}, "results": results}


# --- trigger similarity ---------------------------------------------------------------------------------


def count_distribution_cosine(official: Mapping[str, int], model: Mapping[str, int]) -> float:
    """Cosine similarity of two tool-call-count distributions (each normalised to probabilities over the
    union of counts); 0.0 when either is empty."""
    import numpy as np

    def probs(dist: Mapping[str, int]) -> dict[int, float]:
        total = sum(dist.values())
        return {int(k): (v / total if total else 0.0) for k, v in dist.items()}

    p, q = probs(official), probs(model)
    keys = sorted(p.keys() | q.keys())
    a = np.array([p.get(k, 0.0) for k in keys], dtype=float)
    b = np.array([q.get(k, 0.0) for k in keys], dtype=float)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def trigger_similarity(
    official_rows: Sequence[Mapping[str, Any]],
    model_rows: Sequence[Mapping[str, Any]],
    *,
    official_distribution: Mapping[str, int] | None = None,
    model_distribution: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Precision, recall and F1 of "ends in a tool call" (finish_reason == "tool_calls"), the official rows
    being gold, over rows paired by ``data_index``. Rows present on one side only are listed (``missing``:
    official only, ``extra``: model only) and left out. With both distributions given, also the cosine
    similarity of the tool-call-count distributions."""
    pairing = pair_by_data_index(list(official_rows), list(model_rows))
    tp = fp = fn = tn = 0
    for official, model in pairing.pairs:
        gold = finish_reason_of(official) == "tool_calls"
        pred = finish_reason_of(model) == "tool_calls"
        if gold and pred:
            tp += 1
        elif pred:
            fp += 1
        elif gold:
            fn += 1
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    out: dict[str, Any] = {
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "samples_used": len(pairing.pairs),
        "missing_data_indexes": pairing.missing,
        "extra_data_indexes": pairing.extra,
    }
    if official_distribution is not None and model_distribution is not None:
        out["tool_calls_count_cosine"] = count_distribution_cosine(official_distribution, model_distribution)
    return out


# --- eval752 aggregation: mean, spread, verdicts ----------------------------------------------------------


@dataclass(frozen=True)
class Threshold:
    """``at_least``: value >= target; ``at_most``: value <= target; ``within``: |value - target| <= tolerance.
    Comparisons allow 1e-9 so that a rate like 0.97 against 0.98 +- 0.01 is not failed by float rounding."""

    kind: str
    target: float
    tolerance: float = 0.0

    def passes(self, value: float) -> bool:
        eps = 1e-9
        if self.kind == "at_least":
            return value >= self.target - eps
        if self.kind == "at_most":
            return value <= self.target + eps
        if self.kind == "within":
            return abs(value - self.target) <= self.tolerance + eps
        raise ValueError(f"unknown threshold kind {self.kind!r}")

    def describe(self) -> str:
        if self.kind == "within":
            return f"{self.target:g} +- {self.tolerance:g}"
        return f"{'>=' if self.kind == 'at_least' else '<='} {self.target:g}"


DEFAULT_THRESHOLDS: dict[str, Threshold] = {
    "query_success_rate": Threshold("at_least", 1.0),
    "tool_calls_match_rate": Threshold("within", 0.98, 0.01),
    "trigger_f1": Threshold("at_least", 0.98),
    "schema_accuracy": Threshold("at_least", 0.98),
    "error_only_reasoning_rate": Threshold("at_most", 0.0),
    "language_following_success_rate": Threshold("at_least", 0.40),
    "scenario_check_pass_rate": Threshold("at_least", 1.0),
}


def loop_metrics(summary: Mapping[str, Any], similarity: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """eval752's metrics of one loop (``{"value", "num"}`` each), with trigger metrics when compared."""
    out = summary_metrics(summary)
    if similarity is not None:
        n = similarity.get("samples_used", 0)
        for key in ("f1", "precision", "recall"):
            out[f"trigger_{key}"] = {"value": similarity[key] if n else None, "num": n}
        if "tool_calls_count_cosine" in similarity:
            out["tool_calls_count_cosine"] = {"value": similarity["tool_calls_count_cosine"], "num": n}
    return out


def aggregate_loops(
    loop_summaries: Sequence[Mapping[str, Any]],
    *,
    similarities: Sequence[Mapping[str, Any] | None] | None = None,
    thresholds: Mapping[str, Threshold] | None = None,
) -> dict[str, Any]:
    """Per metric: each loop's value, the unweighted mean over loops that checked anything, min, max,
    sample stdev (0.0 for one loop), total ``num``, and a verdict ("pass"/"fail", or "n/a" with no value)
    of the mean against its threshold."""
    thresholds = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
    sims = list(similarities) if similarities is not None else [None] * len(loop_summaries)
    per_loop = [loop_metrics(s, sim) for s, sim in zip(loop_summaries, sims)]
    names: list[str] = []
    for m in per_loop:
        names.extend(k for k in m if k not in names)
    metrics = combine_loop_metrics(per_loop, names, thresholds)
    return {
        "loops": len(per_loop),
        "metrics": metrics,
        "verdict": overall_verdict(metrics),
    }


def combine_loop_metrics(per_loop: list[dict[str, Any]], names: list[str], rules: Mapping[str, Any]
                         ) -> dict[str, Any]:
    """Per metric over the loops: unweighted mean, summed ``num``, each loop's value, spread, and the
    verdict of the mean against its rule (when there is one)."""
    metrics: dict[str, Any] = {}
    for name in names:
        cells = [m.get(name, {"value": None, "num": 0}) for m in per_loop]
        values = [c["value"] for c in cells if c["value"] is not None]
        entry: dict[str, Any] = {
            "value": mean(values) if values else None,
            "num": sum(c["num"] for c in cells),
            "loops": [c["value"] for c in cells],
            "loop_num": [c["num"] for c in cells],
            "min": min(values) if values else None,
            "max": max(values) if values else None,
            "stdev": (statistics.stdev(values) if len(values) > 1 else 0.0) if values else None,
        }
        rule = rules.get(name)
        if rule is not None:
            entry["threshold"] = rule.describe()
            ok = entry["value"] is not None and not math.isnan(entry["value"])
            entry["verdict"] = ("pass" if rule.passes(entry["value"]) else "fail") if ok else "n/a"
        metrics[name] = entry
    return metrics


def overall_verdict(metrics: Mapping[str, Any]) -> str:
    verdicts = [m["verdict"] for m in metrics.values() if "verdict" in m]
    return "fail" if "fail" in verdicts else ("pass" if "pass" in verdicts else "n/a")
