"""Reports without a model: paired statistics, the run report's HTML (hostile item text), the leaderboard and
the verifier's vendor table, on run directories written here."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from eval752.metrics import summarise
from eval752.report.leaderboard import write_all
from eval752.report.load import expand_dirs, load_run
from eval752.report.run_report import write_run_report
from eval752.report.stats import compare, mcnemar_exact, paired_bootstrap

HOSTILE = '</script><img src=x onerror="document.body.setAttribute(\'data-pwned\',\'1\')"><b>bold</b> & </SCRIPT>'


def make_run(root: Path, name: str, verdicts: list[str], *, section_of=lambda i: "s1" if i % 2 else "s2",
             hostile_at: int | None = None) -> Path:
    """A finished run directory: one row per item with verdict pass, fail, none (no answer) or error."""
    run = root / name
    run.mkdir(parents=True)
    rows = []
    for i, v in enumerate(verdicts):
        text = HOSTILE if i == hostile_at else f"answer {i}"
        ok = v != "error"
        rows.append({
            "item_id": f"it{i:03d}", "sample": 0, "section": section_of(i), "type": "mcq_single", "checker": "choice",
            "request": {"messages": [{"role": "user", "content": f"question {i}" if i != hostile_at else HOSTILE}],
                        "params": {}},
            "response": {"text": text if ok else None, "reasoning": "thinking" if i == 0 else None,
                         "tool_calls": [{"id": "c1", "name": "calc", "arguments": "{}"}] if i == 1 else [],
                         "finish_reason": "stop", "latency_s": 0.01 * (i % 7 + 1), "prompt_tokens": 20 + i,
                         "completion_tokens": 3 + i % 4, "cost": None, "attempts": 1,
                         "error": None if ok else "HTTP 500: boom", "cached": False},
            "verdict": None if not ok else {"score": 1.0 if v == "pass" else 0.0, "passed": v == "pass",
                                            "reason": f"reason {i} {HOSTILE if i == hostile_at else ''}",
                                            "extracted": "B", "answered": v != "none", "details": {}},
            "status": "ok" if ok else "error"})
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = summarise(rows)
    summary["run"] = {"name": name, "dataset": "synthetic", "provider": "sim", "model": "openai/sim-1"}
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "manifest.json").write_text(json.dumps({"status": "complete", "dataset": {"version_hash": "h" * 64}}))
    return run


def test_mcnemar_exact_values():
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(10, 0) == 2 / 1024 == 0.001953125
    assert mcnemar_exact(8, 2) == 0.109375  # 2 * (1 + 10 + 45) / 1024
    assert mcnemar_exact(2, 8) == mcnemar_exact(8, 2)


def test_compare_binary_and_continuous():
    a = {(f"i{k}", 0): 1.0 for k in range(20)}
    b = {**{(f"i{k}", 0): 1.0 for k in range(10)}, **{(f"i{k}", 0): 0.0 for k in range(10, 20)}, ("x", 0): 1.0}
    c = compare(a, b, name_a="A", name_b="B")
    assert c["test"] == "mcnemar_exact" and c["pairs"] == 20 and c["only_b"] == 1
    assert (c["a_only_right"], c["b_only_right"]) == (10, 0) and c["p_value"] == 0.001953125
    assert c["diff"] == 0.5 and c["ci95"] == [0.280869, 0.719131] and c["significant"]
    assert [d["item"] for d in c["differences"]] == [f"i{k}" for k in range(10, 20)]
    cont_a = {(f"i{k}", 0): 0.5 + 0.02 * (k % 5) for k in range(30)}
    cont_b = {(f"i{k}", 0): 0.5 for k in range(30)}
    d = compare(cont_a, cont_b)
    assert d["test"] == "paired_bootstrap" and d["diff"] == pytest.approx(0.04)
    assert d["p_value"] == 0.0 and d["ci95"][0] > 0 and d == compare(cont_a, cont_b)  # seeded: reproducible
    p, ci = paired_bootstrap([0.1, -0.1] * 10)
    assert p == pytest.approx(1.0, abs=0.1) and ci[0] < 0 < ci[1]


def test_run_report_is_self_contained_and_escapes_item_text(tmp_path):
    verdicts = ["pass"] * 12 + ["fail"] * 5 + ["none"] * 2 + ["error"] * 1
    run = make_run(tmp_path, "r1", verdicts, hostile_at=13)
    out = write_run_report(run)
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<script") == 2
    assert "http://" not in html and "https://" not in html and "<link" not in html
    assert "<img src=x" not in html and html.count("</script>") == 2
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', html, re.S).group(1))
    items = {it["id"]: it for it in data["items"]}
    assert items["it013"]["response"] == HOSTILE and items["it013"]["prompt"] == "[user] " + HOSTILE
    assert items["it000"]["reasoning"] == "thinking" and "calc" in items["it001"]["tool_calls"]
    assert [items[f"it{i:03d}"]["verdict"] for i in (0, 12, 17, 19)] == ["pass", "fail", "no answer", "error"]
    assert html.count("data:image/png;base64,") == 3  # latency, prompt and completion token histograms
    assert 'id="metrics"' in html and ">score_answered<" in html and ">s1<" in html and ">mcq_single<" in html
    assert ">request errors</td><td class=num>1</td><td class=num>20</td><td class=num>0.0500<" in html


def test_leaderboard_files_and_paired_test(tmp_path):
    good = make_run(tmp_path, "good", ["pass"] * 18 + ["fail"] * 2)
    bad = make_run(tmp_path, "bad", ["pass"] * 8 + ["fail"] * 12)
    res = write_all([load_run(bad), load_run(good)], tmp_path / "out")
    assert res["metric"] == "score" and [r[1] for r in res["rows"]] == ["good", "bad"]
    with open(tmp_path / "out" / "leaderboard.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["rank"], r["run"], r["score"], r["score num"]) for r in rows] == [("1", "good", "0.9", "20"),
                                                                                 ("2", "bad", "0.4", "20")]
    md = (tmp_path / "out" / "leaderboard.md").read_text().splitlines()
    assert md[2].startswith("| 1 | good | synthetic | sim | openai/sim-1 | [0.699, 0.972] | 20 | 0.9000 |")
    (c,) = json.loads((tmp_path / "out" / "comparisons.json").read_text())
    assert (c["a"], c["b"], c["a_only_right"], c["b_only_right"]) == ("good", "bad", 10, 0)
    assert c["p_value"] == 0.001953125 and c["diff"] == 0.5
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'id="leaderboard"' in html and 'id="comparisons"' in html and "data:image/png;base64," in html
    assert expand_dirs([tmp_path]) == [tmp_path / "bad", tmp_path / "good"]


def test_vendor_table_for_verifier_runs(tmp_path):
    for name, verdict, rate in (("official", "pass", 1.0), ("broken", "fail", 0.5)):
        run = tmp_path / name
        (run / "loop_01").mkdir(parents=True)
        (run / "loop_01" / "results.jsonl").write_text(json.dumps(
            {"data_index": 0, "loop": 1, "status": "success", "request": {"messages": [{"role": "user", "content": "hi"}]},
             "response": {"choices": [{"message": {"content": "hello"}}]}, "tool_calls_valid": rate == 1.0}) + "\n")
        (run / "summary.json").write_text(json.dumps({
            "metrics": {"query_success_rate": {"value": 1.0, "num": 1, "verdict": "pass"},
                        "tool_calls_match_rate": {"value": rate, "num": 1, "verdict": verdict}},
            "verdict": verdict, "run": {"name": name, "provider": name}}))
        (run / "manifest.json").write_text(json.dumps({"status": "complete"}))
    res = write_all([load_run(tmp_path / "official"), load_run(tmp_path / "broken")], tmp_path / "out")
    vendors = (tmp_path / "out" / "vendors.md").read_text().splitlines()
    assert vendors[0] == "| metric | official | broken |"
    assert vendors[3] == "| tool_calls_match_rate | 1.0000 (pass) | 0.5000 (fail) |"
    assert vendors[4] == "| verdict | PASS | FAIL |"
    assert res["comparisons"] == [] and 'id="vendors"' in (tmp_path / "out" / "report.html").read_text()
    assert [r["verdict"] for r in load_run(tmp_path / "broken").records] == ["fail"]


def test_report_cli_errors(tmp_path):
    from eval752.report.cli import main

    assert main([str(tmp_path / "missing")]) == 2
    assert main([str(tmp_path)]) == 2
