"""Bradley-Terry ratings on the Elo scale from pairwise battles, with bootstrap confidence intervals.

A battle is ``(model_a, model_b, outcome)``: outcome "A" (model_a won), "B" (model_b won), "tie" (or "C"),
or a preference in [1, 2] read as model_b's share ``p - 1`` of the point (so a tie counts half each way).
The model: P(i beats j) = 1 / (1 + base ** ((R_j - R_i) / scale)), i.e. strengths pi = base ** (R / scale).

Fit: maximum likelihood by Newton's method on the log strengths (the log-likelihood is concave; a
backtracking line search keeps every step uphill), from the points W_ij model i scored against model j.
``prior`` adds that many virtual tied games of every model against a fixed phantom player; it keeps
ratings finite when a model never lost (or never won) and pulls them slightly together. With ``prior=0``
the fit is the exact maximum-likelihood estimate, which exists only when every model can be reached from
every other through "scored at least a tie against" links; otherwise ``ValueError`` says which model is the
problem.

Ratings are anchored so that ``anchor`` (a model name) has ``anchor_rating``, or, with no anchor, so that
the mean rating is ``anchor_rating``. Confidence intervals come from refitting on battles resampled with
replacement (``rounds`` times, numpy generator seeded with ``seed``) and taking percentiles.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np

from .winrate import preference_of

Battle = tuple[str, str, Any]


def _encode(battles: Iterable[Battle]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    models: dict[str, int] = {}
    a_idx, b_idx, b_share = [], [], []
    for n, battle in enumerate(battles):
        try:
            a, b, outcome = battle
        except (TypeError, ValueError):
            raise ValueError(f"battle {n}: expected (model_a, model_b, outcome), got {battle!r}") from None
        if a == b:
            raise ValueError(f"battle {n}: a model cannot battle itself ({a!r})")
        a_idx.append(models.setdefault(str(a), len(models)))
        b_idx.append(models.setdefault(str(b), len(models)))
        try:
            b_share.append(preference_of(outcome) - 1.0)
        except ValueError as exc:
            raise ValueError(f"battle {n}: {exc}") from None
    if not models:
        raise ValueError("no battles")
    return list(models), np.array(a_idx, dtype=np.int64), np.array(b_idx, dtype=np.int64), np.array(b_share)


def _score_matrix(m: int, a: np.ndarray, b: np.ndarray, share: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """W[i, j] = points model i scored against model j."""
    w = np.bincount(a * m + b, weights=weights * (1.0 - share), minlength=m * m)
    w += np.bincount(b * m + a, weights=weights * share, minlength=m * m)
    return w.reshape(m, m)


def _check_connected(models: list[str], wins: np.ndarray) -> None:
    """The MLE exists only when every model reaches every other along "scored a point against" links. If not,
    some group of models never lost a point to the rest (or never met them) and its ratings run off."""
    m = len(models)
    reach = (wins > 0) | np.eye(m, dtype=bool)  # reach[i, j]: a chain of "i scored against j" links
    while True:
        wider = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if (wider == reach).all():
            break
        reach = wider
    if reach.all():
        return
    for i in range(m):
        group = reach[i] & reach[:, i]
        if (reach[:, i] == group).all():  # nobody outside the group ever scored against it
            names = ", ".join(repr(models[j]) for j in np.nonzero(group)[0])
            raise ValueError(f"Bradley-Terry ratings are unbounded with prior=0: {names} never lost a point to "
                             "the other models (or never met them); use prior > 0")


def _log_likelihood(wins: np.ndarray, theta: np.ndarray, prior: float) -> float:
    diff = theta[:, None] - theta[None, :]
    ll = float(-(wins * np.logaddexp(0.0, -diff)).sum())  # sum W_ij log sigmoid(theta_i - theta_j)
    if prior:
        ll += float((prior / 2.0 * theta - prior * np.logaddexp(0.0, theta)).sum())
    return ll


def _fit_strengths(wins: np.ndarray, prior: float, tol: float = 1e-12, max_iter: int = 500) -> np.ndarray:
    """Natural-log strengths maximising the likelihood: Newton's method with a backtracking line search
    (the log-likelihood is concave). The phantom of the prior has log strength 0; with no prior the
    ratings are only defined up to a common shift and come back centred."""
    games = wins + wins.T
    scored = wins.sum(axis=1)
    theta = np.zeros(wins.shape[0])
    ll = _log_likelihood(wins, theta, prior)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        grad = scored - (games * p).sum(axis=1)
        v = games * p * (1.0 - p)
        neg_hessian = np.diag(v.sum(axis=1)) - v
        if prior:
            s = 1.0 / (1.0 + np.exp(-theta))
            grad += prior / 2.0 - prior * s
            neg_hessian += np.diag(prior * s * (1.0 - s))
        step = np.linalg.lstsq(neg_hessian, grad, rcond=None)[0]
        t = 1.0
        while True:
            candidate = theta + t * step
            new_ll = _log_likelihood(wins, candidate, prior)
            if new_ll >= ll - 1e-12 * max(1.0, abs(ll)) or t < 1e-10:
                break
            t /= 2.0
        theta, ll = candidate, new_ll
        if np.max(np.abs(t * step)) < tol:
            break
    return theta - theta.mean() if prior == 0 else theta


def _ratings(log_pi: np.ndarray, models: list[str], anchor: str | None, anchor_rating: float, scale: float,
             base: float) -> np.ndarray:
    r = log_pi * scale / math.log(base)
    shift = r[models.index(anchor)] if anchor is not None else r.mean()
    return r - shift + anchor_rating


def fit_bradley_terry(battles: Iterable[Battle], *, anchor: str | None = None, anchor_rating: float = 1000.0,
                      scale: float = 400.0, base: float = 10.0, prior: float = 0.1) -> dict[str, float]:
    """Ratings by model name (see the module docstring)."""
    models, a, b, share = _encode(battles)
    if anchor is not None and anchor not in models:
        raise ValueError(f"anchor {anchor!r} is not among the models: {', '.join(sorted(models))}")
    if prior < 0:
        raise ValueError(f"prior must be >= 0, not {prior!r}")
    wins = _score_matrix(len(models), a, b, share, np.ones(len(a)))
    if prior == 0:
        _check_connected(models, wins)
    r = _ratings(_fit_strengths(wins, prior), models, anchor, anchor_rating, scale, base)
    return {name: float(x) for name, x in zip(models, r)}


def win_probability(rating_a: float, rating_b: float, *, scale: float = 400.0, base: float = 10.0) -> float:
    """P(a beats b) under the model."""
    return 1.0 / (1.0 + base ** ((rating_b - rating_a) / scale))


def bootstrap_ratings(battles: Sequence[Battle], *, rounds: int = 200, seed: int = 0, confidence: float = 0.95,
                      anchor: str | None = None, anchor_rating: float = 1000.0, scale: float = 400.0,
                      base: float = 10.0, prior: float = 0.1) -> dict[str, tuple[float, float]]:
    """Percentile confidence intervals ``(low, high)`` per model from ``rounds`` resamples of the battles."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, not {rounds!r}")
    models, a, b, share = _encode(battles)
    m, n = len(models), len(a)
    rng = np.random.default_rng(seed)
    samples = np.empty((rounds, m))
    for k in range(rounds):
        weights = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
        wins = _score_matrix(m, a, b, share, weights)
        if prior == 0:
            _check_connected(models, wins)
        samples[k] = _ratings(_fit_strengths(wins, prior), models, anchor, anchor_rating, scale, base)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low = np.percentile(samples, tail, axis=0)
    high = np.percentile(samples, 100.0 - tail, axis=0)
    return {name: (float(lo), float(hi)) for name, lo, hi in zip(models, low, high)}


def leaderboard(battles: Sequence[Battle], *, rounds: int = 200, seed: int = 0, confidence: float = 0.95,
                anchor: str | None = None, anchor_rating: float = 1000.0, scale: float = 400.0,
                base: float = 10.0, prior: float = 0.1) -> list[dict[str, Any]]:
    """One row per model, best first: rank, model, rating, ci_low, ci_high, battles, wins, losses, ties.

    ``rounds=0`` skips the bootstrap (ci_low and ci_high are None). Equal ratings share a rank.
    """
    battles = list(battles)
    opts = dict(anchor=anchor, anchor_rating=anchor_rating, scale=scale, base=base, prior=prior)
    ratings = fit_bradley_terry(battles, **opts)
    cis = bootstrap_ratings(battles, rounds=rounds, seed=seed, confidence=confidence, **opts) if rounds else {}
    tally = {name: {"battles": 0, "wins": 0, "losses": 0, "ties": 0} for name in ratings}
    for a, b, outcome in battles:
        share_b = preference_of(outcome) - 1.0
        for name, share in ((str(a), 1.0 - share_b), (str(b), share_b)):
            t = tally[name]
            t["battles"] += 1
            t["wins" if share > 0.5 else "losses" if share < 0.5 else "ties"] += 1
    order = sorted(ratings, key=lambda name: (-ratings[name], name))
    rows: list[dict[str, Any]] = []
    for pos, name in enumerate(order):
        tied_above = rows and math.isclose(ratings[name], rows[-1]["rating"], rel_tol=0, abs_tol=1e-6)
        rank = rows[-1]["rank"] if tied_above else pos + 1
        low, high = cis.get(name, (None, None))
        rows.append({"rank": rank, "model": name, "rating": ratings[name], "ci_low": low, "ci_high": high,
                     **tally[name]})
    return rows


def render_markdown(rows: Sequence[dict[str, Any]], *, digits: int = 1) -> str:
    """A Markdown table of ``leaderboard`` rows."""
    lines = ["| rank | model | rating | 95% CI | battles | wins | losses | ties |",
             "|---:|---|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        ci = "" if r.get("ci_low") is None else f"{r['ci_low']:.{digits}f} to {r['ci_high']:.{digits}f}"
        model = str(r["model"]).replace("|", "\\|")
        lines.append(f"| {r['rank']} | {model} | {r['rating']:.{digits}f} | {ci} | {r['battles']} | {r['wins']} | "
                     f"{r['losses']} | {r['ties']} |")
    return "\n".join(lines) + "\n"
