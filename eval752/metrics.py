"""Aggregation: every metric carries its value, its own denominator ``num`` and, where it applies, a 95%
confidence interval. Failed requests are never dropped silently: ``score`` counts them as wrong (its
``num`` is every item-sample), ``score_answered`` excludes them (its ``num`` is the successful ones), and
both counts are shown.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any, Iterable, Mapping

Z95 = 1.959963984540054


def wilson(successes: float, n: int) -> list[float] | None:
    """Wilson score interval for a proportion (fine for fractional successes from partial credit)."""
    if n == 0:
        return None
    p = successes / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def mean_ci(values: list[float]) -> list[float] | None:
    """Normal-approximation interval of a mean (continuous scores)."""
    if len(values) < 2:
        return None
    m = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values))
    return [m - Z95 * se, m + Z95 * se]


def metric(value: float | None, num: int, ci: list[float] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"value": value, "num": num}
    if ci is not None:
        out["ci95"] = [round(ci[0], 6), round(ci[1], 6)]
    out.update(extra)
    return out


def score_metric(scores: list[float]) -> dict[str, Any]:
    if not scores:
        return metric(None, 0)
    mean = statistics.fmean(scores)
    binary = all(s in (0.0, 1.0) for s in scores)
    ci = wilson(sum(scores), len(scores)) if binary else mean_ci(scores)
    return metric(round(mean, 6), len(scores), ci)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def _score(row: Mapping[str, Any]) -> float:
    v = row.get("verdict")
    return float(v["score"]) if row.get("status") == "ok" and v else 0.0


def summarise(rows: Iterable[Mapping[str, Any]], *, samples: int = 1) -> dict[str, Any]:
    rows = list(rows)
    ok = [r for r in rows if r.get("status") == "ok"]
    failed = [r for r in rows if r.get("status") != "ok"]
    metrics: dict[str, Any] = {
        "score": score_metric([_score(r) for r in rows]) | {"failures": "counted as wrong"},
        "score_answered": score_metric([_score(r) for r in ok]) | {"failures": "excluded"},
        "error_rate": metric(round(len(failed) / len(rows), 6) if rows else None, len(rows),
                             wilson(len(failed), len(rows))),
    }
    mcq = [r for r in ok if r.get("type") in ("mcq_single", "mcq_multi") and r.get("verdict")]
    if mcq:
        unanswered = sum(1 for r in mcq if not r["verdict"].get("answered", True))
        metrics["no_answer_rate"] = metric(round(unanswered / len(mcq), 6), len(mcq), wilson(unanswered, len(mcq)))
    if samples > 1:
        metrics.update(_pass_at_k_metrics(rows, samples))
    from .judge.summary import judge_metrics

    metrics.update(judge_metrics(ok))  # judge_score, judge_unparseable, pairwise_inconsistent (judge rows only)

    def breakdown(field: str) -> dict[str, Any]:
        groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for r in rows:
            groups[str(r.get(field) or "")].append(r)
        return {
            g: {"score": score_metric([_score(r) for r in rs]), "failed": sum(r.get("status") != "ok" for r in rs)}
            for g, rs in sorted(groups.items())
        }

    reasons: dict[str, int] = defaultdict(int)
    for r in failed:
        reasons[(r.get("response") or {}).get("error") or "unknown error"] += 1
    latencies = sorted(
        (r.get("response") or {}).get("latency_s") for r in ok
        if not (r.get("response") or {}).get("cached") and (r.get("response") or {}).get("latency_s") is not None
    )
    tokens_in = [(r.get("response") or {}).get("prompt_tokens") for r in ok]
    tokens_out = [(r.get("response") or {}).get("completion_tokens") for r in ok]
    costs = [(r.get("response") or {}).get("cost") for r in ok]
    return {
        "counts": {
            "rows": len(rows),
            "items": len({r.get("item_id") for r in rows}),
            "samples": samples,
            "ok": len(ok),
            "failed": len(failed),
            "cached": sum(1 for r in ok if (r.get("response") or {}).get("cached")),
            "checker_errors": sum(1 for r in ok if ((r.get("verdict") or {}).get("details") or {}).get("checker_error")),
            "attempts": sum(int((r.get("response") or {}).get("attempts") or 0) for r in rows),
        },
        "metrics": metrics,
        "by_type": breakdown("type"),
        "by_section": breakdown("section"),
        "failed": {"count": len(failed), "reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1]))},
        "latency_s": _percentiles(latencies),
        "tokens": {
            "prompt": sum(t for t in tokens_in if isinstance(t, int)),
            "completion": sum(t for t in tokens_out if isinstance(t, int)),
            "num": sum(1 for t in tokens_out if isinstance(t, int)),
        },
        "cost": {
            "total": round(sum(c for c in costs if isinstance(c, (int, float))), 8)
            if any(isinstance(c, (int, float)) for c in costs) else None,
            "num_priced": sum(1 for c in costs if isinstance(c, (int, float))),
        },
    }


def _percentiles(sorted_values: list[float]) -> dict[str, Any]:
    if not sorted_values:
        return {"num": 0, "p50": None, "p95": None, "max": None}

    def pct(p: float) -> float:
        i = min(len(sorted_values) - 1, max(0, math.ceil(p * len(sorted_values)) - 1))
        return round(sorted_values[i], 6)

    return {"num": len(sorted_values), "p50": pct(0.5), "p95": pct(0.95), "max": round(sorted_values[-1], 6)}


def _pass_at_k_metrics(rows: list[Mapping[str, Any]], samples: int) -> dict[str, Any]:
    per_item: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        per_item[str(r.get("item_id"))].append(_score(r))
    out = {}
    ks = sorted({k for k in (1, 2, 5, 10, samples) if k <= samples})
    for k in ks:
        vals = [pass_at_k(len(s), sum(1 for x in s if x >= 1.0), k) for s in per_item.values() if len(s) >= k]
        out[f"pass@{k}"] = metric(round(statistics.fmean(vals), 6) if vals else None, len(vals), mean_ci(vals))
    return out
