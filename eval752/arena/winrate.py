"""Win rate against a baseline from pairwise preferences, and position-swap debiasing.

A preference compares a baseline (first, "A") with a model (second, "B") on one instruction: a float in
[1, 2], 1 = the baseline's output is better, 2 = the model's, 1.5 = a tie (AlpacaEval's convention; its
weighted judges give fractional values). Categorical verdicts map to 1 ("A"), 2 ("B") and 1.5 ("tie", or
"C" as MT-bench's pairwise judge writes a tie).

``win_rate`` gives AlpacaEval's figures: ``win_rate = mean(p - 1) * 100``, ``standard_error =
stdev(100 (p - 1)) / sqrt(n)`` (sample standard deviation), ``n_wins = #(p > 1.5)``, ``n_wins_base =
#(p < 1.5)``, ``n_draws = #(p == 1.5)`` and ``discrete_win_rate = (n_wins + n_draws / 2) / n * 100``.

Judges favour one position. ``combine_swapped`` takes a verdict judged in the order (baseline, model) and
one judged in the order (model, baseline): if they agree the verdict stands, otherwise it is a tie and the
pair is counted as inconsistent (``WinRate.n_inconsistent``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable

_VERDICTS = {"a": 1.0, "b": 2.0, "tie": 1.5, "c": 1.5}


def preference_of(verdict: Any) -> float:
    """A preference in [1, 2] from a float/int preference or a verdict "A", "B", "tie" (or "C")."""
    if isinstance(verdict, str):
        key = verdict.strip().strip("[]").strip().casefold()
        if key in _VERDICTS:
            return _VERDICTS[key]
        raise ValueError(f"unknown pairwise verdict {verdict!r}; expected A, B, tie (or C), or a number in [1, 2]")
    if isinstance(verdict, bool) or not isinstance(verdict, (int, float)):
        raise ValueError(f"a preference is a number in [1, 2] or a verdict A/B/tie, not {verdict!r}")
    p = float(verdict)
    if not 1.0 <= p <= 2.0:  # also rejects NaN
        raise ValueError(f"a preference must lie in [1, 2], not {verdict!r}")
    return p


@dataclass(frozen=True)
class WinRate:
    """The model's standing against the baseline over ``n_total`` instructions (rates in percent)."""

    win_rate: float
    standard_error: float
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int
    discrete_win_rate: float
    n_inconsistent: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def win_rate(preferences: Iterable[Any], *, n_inconsistent: int = 0) -> WinRate:
    """AlpacaEval's win rate, standard error and counts from preferences or categorical verdicts."""
    prefs = [preference_of(p) for p in preferences]
    n = len(prefs)
    if n == 0:
        raise ValueError("win_rate needs at least one preference")
    scores = [100.0 * (p - 1.0) for p in prefs]
    mean = math.fsum(scores) / n
    if n > 1:
        variance = math.fsum((s - mean) ** 2 for s in scores) / (n - 1)
        se = math.sqrt(variance) / math.sqrt(n)
    else:
        se = float("nan")
    wins = sum(1 for p in prefs if p > 1.5)
    losses = sum(1 for p in prefs if p < 1.5)
    draws = n - wins - losses
    return WinRate(win_rate=mean, standard_error=se, n_wins=wins, n_wins_base=losses, n_draws=draws,
                   n_total=n, discrete_win_rate=(wins + draws / 2) / n * 100.0, n_inconsistent=n_inconsistent)


def combine_swapped(verdict_ab: Any, verdict_ba: Any) -> tuple[float, bool]:
    """Combine a verdict judged as (baseline=A, model=B) with one judged as (model=A, baseline=B).

    Returns ``(preference in the baseline-first orientation, consistent)``. Both must be categorical
    (A, B, tie/C, or exactly 1, 1.5, 2). Agreement keeps the verdict; any disagreement, a tie against a
    win included, gives a tie (1.5) marked inconsistent.
    """
    first = preference_of(verdict_ab)
    second = preference_of(verdict_ba)
    for given, p in ((verdict_ab, first), (verdict_ba, second)):
        if p not in (1.0, 1.5, 2.0):
            raise ValueError(f"combine_swapped takes categorical verdicts (A, B, tie), not {given!r}")
    unswapped = 3.0 - second  # (model, baseline) order back to (baseline, model)
    if first == unswapped:
        return first, True
    return 1.5, False


def win_rate_swapped(pairs: Iterable[tuple[Any, Any]]) -> WinRate:
    """``win_rate`` over position-swapped verdict pairs; inconsistent pairs count as ties and are counted."""
    prefs: list[float] = []
    inconsistent = 0
    for ab, ba in pairs:
        p, consistent = combine_swapped(ab, ba)
        prefs.append(p)
        inconsistent += not consistent
    return win_rate(prefs, n_inconsistent=inconsistent)
