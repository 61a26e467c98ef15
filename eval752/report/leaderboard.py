"""Leaderboard of runs x metrics (Markdown, CSV, HTML), paired comparisons, and the verifier's vendor table."""
from __future__ import annotations

import csv
import io
import json
from itertools import combinations
from pathlib import Path
from typing import Any

from . import plots
from .assets import e, fmt, img, page, table
from .load import RunData
from .stats import compare

MAX_CHART_RUNS = 10


def main_metric(runs: list[RunData], wanted: str | None = None) -> str:
    if wanted:
        return wanted
    if any("score" in (r.summary.get("metrics") or {}) for r in runs):
        return "score"
    for r in runs:
        for name in r.summary.get("metrics") or {}:
            return name
    return "score"


def metric_names(runs: list[RunData]) -> list[str]:
    names: list[str] = []
    for r in runs:
        names += [n for n in (r.summary.get("metrics") or {}) if n not in names]
    return names


def ranked(runs: list[RunData], metric: str) -> list[RunData]:
    def key(r: RunData) -> tuple:
        m = (r.summary.get("metrics") or {}).get(metric) or {}
        v = m.get("value")
        return (str(r.summary.get("verdict")).lower() == "fail", v is None, -(v or 0.0), r.name)  # verifier: passes first

    return sorted(runs, key=key)


def leaderboard_rows(runs: list[RunData], metric: str) -> tuple[list[str], list[list[Any]]]:
    names = metric_names(runs)
    headers = ["rank", "run", "dataset", "provider", "model", f"{metric} 95% CI", f"{metric} num", *names]
    rows = []
    for i, r in enumerate(ranked(runs, metric), 1):
        info = r.summary.get("run") or {}
        metrics = r.summary.get("metrics") or {}
        m = metrics.get(metric) or {}
        ci = m.get("ci95")
        rows.append([i, r.name, info.get("dataset"), info.get("provider"), info.get("model"),
                     f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "", m.get("num"),
                     *[(metrics.get(n) or {}).get("value") for n in names]])
    return headers, rows


def to_markdown(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        return fmt(v).replace("|", "\\|")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(headers: list[str], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    w.writerows([["" if v is None else v for v in row] for row in rows])
    return buf.getvalue()


def comparisons(runs: list[RunData], metric: str) -> list[dict[str, Any]]:
    """Every pair (in rank order) of runs of the same dataset version, up to 10 runs per dataset."""
    groups: dict[Any, list[RunData]] = {}
    for r in ranked(runs, metric):
        if r.records and r.kind == "eval":
            groups.setdefault(r.dataset_hash, []).append(r)
    out = []
    for group in groups.values():
        for a, b in combinations(group[:MAX_CHART_RUNS], 2):
            out.append(compare(a.scores(), b.scores(), name_a=a.name, name_b=b.name))
    return out


def vendor_table(runs: list[RunData]) -> tuple[list[str], list[list[Any]]] | None:
    vruns = [r for r in runs if r.kind == "verifier"]
    if not vruns:
        return None
    names = metric_names(vruns)
    headers = ["metric", *[r.name for r in vruns]]
    rows = []
    for n in names:
        row: list[Any] = [n]
        for r in vruns:
            m = (r.summary.get("metrics") or {}).get(n) or {}
            v = "-" if m.get("value") is None else f"{m['value']:.4f}"
            row.append(f"{v} ({m['verdict']})" if m.get("verdict") else v)
        rows.append(row)
    rows.append(["verdict", *[str(r.summary.get("verdict", "-")).upper() for r in vruns]])
    return headers, rows


def _comparison_rows(comps: list[dict[str, Any]]) -> list[list[Any]]:
    return [[c["a"], c["b"], c.get("test"), c["pairs"], c.get("diff"),
             f"[{c['ci95'][0]:.4f}, {c['ci95'][1]:.4f}]" if c.get("ci95") else "", c.get("p_value"),
             "yes" if c.get("significant") else "no", len(c.get("differences") or [])] for c in comps]


COMPARISON_HEADERS = ["run A", "run B", "test", "pairs", "diff A-B", "95% CI", "p-value", "p<0.05", "items differing"]


def build_html(runs: list[RunData], metric: str, comps: list[dict[str, Any]]) -> str:
    headers, rows = leaderboard_rows(runs, metric)
    top = ranked(runs, metric)[:MAX_CHART_RUNS]
    chart_metrics = [n for n in metric_names(top)
                     if all(isinstance((r.summary.get("metrics") or {}).get(n, {}).get("value"), (int, float, type(None)))
                            and 0 <= ((r.summary.get("metrics") or {}).get(n, {}).get("value") or 0) <= 1 for r in top)]
    series = {r.name: [((r.summary.get("metrics") or {}).get(n) or {}).get("value") for n in chart_metrics]
              for r in top}
    parts = [f"<h1>eval752 leaderboard ({len(runs)} runs, ranked by {e(metric)})</h1>",
             table(headers, rows, numeric_from=5, id="leaderboard"),
             img(plots.grouped_bars(chart_metrics, series, f"top {len(top)} runs"), "metrics by run")]
    if comps:
        parts += ["<h2>Paired significance</h2>",
                  "<p>McNemar's exact test for binary scores, paired bootstrap for continuous ones; "
                  "failed requests count as 0.</p>",
                  table(COMPARISON_HEADERS, _comparison_rows(comps), numeric_from=3, id="comparisons")]
        for c in comps[:MAX_CHART_RUNS]:
            diffs = c.get("differences") or []
            parts.append(f"<details><summary>{e(c['a'])} vs {e(c['b'])}: {len(diffs)} items differ</summary>"
                         + table(["item", "sample", c["a"][:40], c["b"][:40]],
                                 [[d["item"], d["sample"], d["a"], d["b"]] for d in diffs[:500]]) + "</details>")
    vt = vendor_table(runs)
    if vt:
        parts += ["<h2>Vendor verification</h2>", table(vt[0], vt[1], id="vendors")]
    return page("eval752 leaderboard", "\n".join(parts))


def write_all(runs: list[RunData], out: Path, metric: str | None = None) -> dict[str, Any]:
    metric = main_metric(runs, metric)
    out.mkdir(parents=True, exist_ok=True)
    headers, rows = leaderboard_rows(runs, metric)
    comps = comparisons(runs, metric)
    (out / "leaderboard.md").write_text(to_markdown(headers, rows), encoding="utf-8")
    (out / "leaderboard.csv").write_text(to_csv(headers, rows), encoding="utf-8")
    (out / "comparisons.json").write_text(json.dumps(comps, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    vt = vendor_table(runs)
    if vt:
        (out / "vendors.md").write_text(to_markdown(*vt), encoding="utf-8")
    (out / "report.html").write_text(build_html(runs, metric, comps), encoding="utf-8")
    return {"metric": metric, "headers": headers, "rows": rows, "comparisons": comps, "out": out}
