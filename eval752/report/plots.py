"""Plots as base64 PNG strings for self-contained HTML. matplotlib is imported here only, with the Agg
backend, when a report is written (never on a run's hot path)."""
from __future__ import annotations

import base64
import io
from typing import Sequence


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    _plt().close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def histogram(values: Sequence[float], title: str, xlabel: str, bins: int = 30) -> str | None:
    values = [float(v) for v in values if isinstance(v, (int, float))]
    if not values:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 2.8))
    ax.hist(values, bins=min(bins, max(1, len(set(values)))), color="#4c72b0", edgecolor="white")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rows")
    return _png(fig)


def grouped_bars(labels: Sequence[str], series: dict[str, Sequence[float | None]], title: str) -> str | None:
    """One group of bars per label (metric), one bar per series (run); None values are drawn as 0."""
    if not labels or not series:
        return None
    plt = _plt()
    n = len(series)
    width = 0.8 / max(1, n)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(labels) * max(1, n) ** 0.5), 3.4))
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(labels))]
        ax.bar(xs, [v or 0.0 for v in values], width=width, label=name[:40])
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _png(fig)
