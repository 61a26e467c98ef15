"""``report.html`` of one run: summary metrics with intervals and denominators, breakdowns per section and
type, failure and no-answer rates, latency and token histograms, and an item browser. One file, no network."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import plots
from .assets import BROWSER_JS, e, img, json_block, page, table
from .load import RunData, load_run

REPORT = "report.html"


def _ci(m: dict[str, Any]) -> str:
    ci = m.get("ci95")
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def metrics_table(summary: dict[str, Any]) -> str:
    rows = []
    for name, m in (summary.get("metrics") or {}).items():
        rows.append([name, m.get("value"), m.get("num"), _ci(m), m.get("threshold", ""), m.get("verdict", "")])
    return table(["metric", "value", "num", "95% CI", "threshold", "verdict"], rows, id="metrics")


def breakdown_table(groups: dict[str, Any], label: str) -> str:
    rows = [[g or "(none)", b["score"].get("value"), b["score"].get("num"), _ci(b["score"]), b.get("failed", 0)]
            for g, b in (groups or {}).items()]
    return table([label, "score", "num", "95% CI", "failed"], rows) if rows else "<p class=muted>none</p>"


def build_run_html(run: RunData) -> str:
    s, m = run.summary, run.manifest
    info = s.get("run") or {}
    title = f"eval752 report: {info.get('name') or run.name}"
    counts = s.get("counts") or {}
    parts = [f"<h1>{e(title)}</h1>",
             f"<p>dataset <b>{e(info.get('dataset') or (m.get('dataset') or {}).get('name'))}</b>, provider "
             f"<b>{e(info.get('provider'))}</b> ({e(info.get('model'))}), status <b>{e(m.get('status'))}</b>, "
             f"started {e(m.get('started'))}, ended {e(m.get('ended'))}</p>",
             "<p>" + ", ".join(f"{e(k)}: {e(v)}" for k, v in counts.items()) + "</p>"]
    if s.get("verdict"):
        parts.append(f"<p>verifier verdict: <b class={e(s['verdict'])}>{e(str(s['verdict']).upper())}</b></p>")
    parts += ["<h2>Summary metrics</h2>", metrics_table(s)]
    if s.get("by_section"):
        parts += ["<h2>By section</h2>", breakdown_table(s["by_section"], "section")]
    if s.get("by_type"):
        parts += ["<h2>By type</h2>", breakdown_table(s["by_type"], "type")]
    failed = s.get("failed") or {}
    recs = run.records
    n = len(recs) or 1
    no_answer = sum(1 for r in recs if r["verdict"] == "no answer")
    errors = sum(1 for r in recs if r["verdict"] == "error")
    parts += ["<h2>Failures</h2>",
              table(["what", "rows", "of", "rate"], [["request errors", errors, len(recs), errors / n],
                                                      ["no answer", no_answer, len(recs), no_answer / n]],
                    id="rates")]
    if failed.get("reasons"):
        parts.append(table(["error", "rows"], list(failed["reasons"].items())))
    lat = [r["latency_s"] for r in recs if r.get("latency_s") is not None]
    pt = [r["prompt_tokens"] for r in recs if r.get("prompt_tokens") is not None]
    ct = [r["completion_tokens"] for r in recs if r.get("completion_tokens") is not None]
    parts += ["<h2>Latency and tokens</h2>", '<div class="plots">',
              img(plots.histogram(lat, f"latency (n={len(lat)})", "seconds"), "latency histogram"),
              img(plots.histogram(pt, f"prompt tokens (n={len(pt)})", "tokens"), "prompt token histogram"),
              img(plots.histogram(ct, f"completion tokens (n={len(ct)})", "tokens"), "completion token histogram"),
              "</div>"]
    if not (lat or pt or ct):
        parts.append("<p class=muted>no latency or token data</p>")
    parts += ["<h2>Items</h2>",
              '<div id="controls"><label><input type="checkbox" id="f-failed"> failed only</label>'
              '<select id="f-section"></select><select id="f-verdict"></select>'
              '<input type="search" id="f-search" placeholder="search id, prompt, response"><span id="shown"></span>'
              "</div>",
              '<table id="items"><thead><tr><th>item</th><th>sample</th><th>section</th><th>type</th><th>verdict</th>'
              "<th>score</th><th>response</th></tr></thead><tbody></tbody></table>",
              '<div id="detail"><p class=muted>click a row to see its prompt, response, reasoning, tool calls '
              "and the checker's reasons</p></div>",
              json_block("report-data", {"items": recs}), f"<script>{BROWSER_JS}</script>"]
    return page(title, "\n".join(parts))


def write_run_report(run_dir: Path | str) -> Path:
    """Write ``<run_dir>/report.html`` atomically and return its path."""
    run_dir = Path(run_dir)
    text = build_run_html(load_run(run_dir))
    out = run_dir / REPORT
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return out
