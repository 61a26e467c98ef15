"""Paired significance between two runs scored on the same (item, sample) pairs.

- Binary scores (every score 0 or 1): McNemar's exact test, a two-sided binomial test on the discordant
  pairs (b = A right and B wrong, c = A wrong and B right): ``p = min(1, 2 * P[X <= min(b, c)])`` with
  ``X ~ Binomial(b + c, 1/2)``; the difference ``(b - c) / n`` gets a Wald interval for paired proportions.
- Continuous scores: a paired bootstrap over the pairs (fixed seed, 10 000 resamples): the percentile 95%
  interval of the mean difference and ``p = min(1, 2 * min(P[d* <= 0], P[d* >= 0]))``.
Failed requests score 0 (the ``score`` metric's convention). Pairs present in only one run are counted and
left out.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

Z95 = 1.959963984540054


def mcnemar_exact(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def paired_bootstrap(diffs: list[float], *, resamples: int = 10_000, seed: int = 0) -> tuple[float, list[float]]:
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(resamples, len(d)))
    means = d[idx].mean(axis=1)
    p = min(1.0, 2.0 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    lo, hi = np.percentile(means, [2.5, 97.5])
    return p, [float(lo), float(hi)]


def compare(a: Mapping[Any, float], b: Mapping[Any, float], *, name_a: str = "A", name_b: str = "B",
            alpha: float = 0.05) -> dict[str, Any]:
    """Paired comparison of score maps ``(item, sample) -> score``: difference A - B, its 95% interval,
    the p-value, the test used, and the items on which the two runs differ."""
    keys = sorted(set(a) & set(b), key=str)
    out: dict[str, Any] = {"a": name_a, "b": name_b, "pairs": len(keys),
                           "only_a": len(set(a) - set(b)), "only_b": len(set(b) - set(a))}
    if not keys:
        return out | {"test": None, "diff": None, "ci95": None, "p_value": None, "significant": False,
                      "differences": []}
    xa = [float(a[k]) for k in keys]
    xb = [float(b[k]) for k in keys]
    n = len(keys)
    diff = sum(xa) / n - sum(xb) / n
    binary = all(v in (0.0, 1.0) for v in xa + xb)
    if binary:
        b_ = sum(1 for x, y in zip(xa, xb) if x == 1.0 and y == 0.0)
        c_ = sum(1 for x, y in zip(xa, xb) if x == 0.0 and y == 1.0)
        p = mcnemar_exact(b_, c_)
        se = math.sqrt(max(0.0, (b_ + c_) - (b_ - c_) ** 2 / n)) / n
        ci = [diff - Z95 * se, diff + Z95 * se]
        out |= {"test": "mcnemar_exact", "a_only_right": b_, "b_only_right": c_}
    else:
        p, ci = paired_bootstrap([x - y for x, y in zip(xa, xb)])
        out |= {"test": "paired_bootstrap", "resamples": 10_000, "seed": 0}
    out |= {"mean_a": round(sum(xa) / n, 6), "mean_b": round(sum(xb) / n, 6), "diff": round(diff, 6),
            "ci95": [round(ci[0], 6), round(ci[1], 6)], "p_value": p, "significant": p < alpha,
            "differences": [{"item": k[0], "sample": k[1], "a": x, "b": y}
                            for k, x, y in zip(keys, xa, xb) if x != y]}
    return out
