"""The live vendor verifier end to end: the ``eval752`` command against the simulated vendor's official and
broken profiles (eval752/data/verifier_sample.jsonl: 39 rows, 34 labelled (19 expect a call), 8 language,
7 repetition and 3 scenario checks), plus the sim defects on their own."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import last_line, run_cli
from eval752.errors import ConfigError
from eval752.providers.sim import SimSettings
from eval752.providers.sim.behaviours import create
from eval752.providers.sim.context import Draft, RequestContext
from eval752.providers.sim.defects import reverse_listed_names
from eval752.verifier import load_prompt_rows, rescore_results
from eval752.verifier.aggregate import Threshold
from eval752.verifier.live import parse_threshold, parse_thresholds
from eval752.verifier.validators import is_error_only_reasoning, scenario_fields, validate_tool_call
from eval752.verifier import textscan

SAMPLE = Path(__file__).resolve().parents[1] / "eval752" / "data" / "verifier_sample.jsonl"
REPEAT_STRICT = 'verifier.thresholds.repeat_ngram_pass_rate=">= 1"'
VALIDATOR_FIELDS = (
    "finish_reason", "error_only_reasoning_checked", "error_only_reasoning", "tool_calls_finish_reason",
    "tool_calls_valid", "tool_calls_count", "tool_calls_reason", "language_following_checked",
    "language_following_valid", "error_repeating_checked", "error_repeating", "error_repeating_valid",
    "error_repeating_config", "scenario_check_checked", "scenario_check_valid", "scenario_check_detail",
)  # fmt: skip


def loop_rows(run_dir: Path, loop: int) -> list[dict]:
    path = run_dir / f"loop_{loop:02d}" / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def loop_summary_file(run_dir: Path, loop: int, provider: str) -> dict:
    return json.loads((run_dir / f"loop_{loop:02d}" / f"{provider}_summary.json").read_text())


def summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def values(run_dir: Path) -> dict:
    """metric -> (mean value, num, verdict or None)."""
    return {k: (m["value"], m["num"], m.get("verdict")) for k, m in summary(run_dir)["metrics"].items()}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("verifier")
    return root, {"EVAL752_CACHE_DIR": str(root / "cache")}


def verifier(work, *args: str) -> Path:
    root, env = work
    r = run_cli(["recipe=verifier_demo", f"output_root={root}", "progress=false", *args], cwd=root, env=env)
    assert r.returncode == 0, r.stderr
    return Path(last_line(r.stdout))


@pytest.fixture(scope="module")
def official(work) -> Path:
    return verifier(work)


@pytest.fixture(scope="module")
def broken_tools(work, official) -> Path:
    return verifier(work, "provider=sim_broken_tools", f"verifier.baseline={official}")


@pytest.fixture(scope="module")
def broken_text(work, official) -> Path:
    return verifier(work, "provider=sim_broken_text", f"verifier.baseline={official}", REPEAT_STRICT)


# -- the official profile --------------------------------------------------------------------------------
def test_official_profile_passes_every_verdict(official):
    for name in ("manifest.json", "summary.json", "metrics_report.json", ".hydra/config.yaml"):
        assert (official / name).is_file(), name
    for loop in (1, 2):
        rows = loop_rows(official, loop)
        assert sorted(r["data_index"] for r in rows) == list(range(1, 40))
        assert {r["status"] for r in rows} == {"success"} and {r["loop"] for r in rows} == {loop}
        assert (official / f"loop_{loop:02d}" / "batch_report.json").is_file()
    assert values(official) == {
        "query_success_rate": (1.0, 78, "pass"),
        "tool_calls_match_rate": (33 / 34, 68, "pass"),  # the labelled scenario row never matches (as upstream)
        "schema_accuracy": (1.0, 38, "pass"),
        "error_only_reasoning_rate": (0.0, 78, "pass"),
        "language_following_success_rate": (1.0, 16, "pass"),
        "repeat_ngram_pass_rate": (1.0, 14, None),
        "scenario_check_pass_rate": (1.0, 6, "pass"),
    }
    s = summary(official)
    assert s["verdict"] == "pass" and s["loops"] == 2
    assert s["counts"] == {"prompts": 39, "loops": 2, "rows": 78, "ok": 78, "failed": 0, "attempts": 78}
    loop1 = loop_summary_file(official, 1, "sim_official")
    assert loop1 == loop_summary_file(official, 2, "sim_official")
    counts = ("tool_calls_finish_tool_calls", "stop_finish_stop", "tool_calls_total_count")
    assert [loop1[k] for k in counts] == [19, 14, 20]
    assert loop1["tool_calls_match_rate"] == 0.9706 and loop1["success_rate"] == 1.0
    report = json.loads((official / "metrics_report.json").read_text())
    assert report["summary"] == {"total_files": 2, "average_metrics": {
        "1. Query-Success-Rate": 1.0, "2. ToolCalls-Match-Rate": 33 / 34, "4. ToolCalls-Schema-Accuracy": 1.0,
        "5. Error-Only-Reasoning-Rate": 0.0, "6. Language-Following-Success-Rate": 1.0,
        "7. Scenario-Check-Pass-Rate": 1.0}}
    assert [r["file"] for r in report["results"]] == ["loop_01/sim_official_summary.json",
                                                      "loop_02/sim_official_summary.json"]
    manifest = json.loads((official / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["verdict"] == "pass"
    assert manifest["verifier"]["loops"] == 2 and len(manifest["dataset"]["version_hash"]) == 64
    rows = {r["data_index"]: r for r in loop_rows(official, 1)}
    shell = json.loads(rows[1]["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert shell == {"command": ["bash", "-lc", "ls -la"]}
    assert rows[1]["request"]["seed"] == 0 and loop_rows(official, 2)[0]["request"]["seed"] == 1  # seed + loop
    assert rows[5]["request"]["messages"][4]["tool_calls"][0]["id"] == "run_shell:1"  # ids made unique
    assert rows[8]["request"]["messages"][0]["role"] == "system"  # _input sent as system
    assert rows[34]["scenario_check_detail"]["actual"] == ["origin", "destination", "date", "passengers"]
    assert "。" in rows[20]["response"]["choices"][0]["message"]["content"]  # Japanese prompt, Japanese reply


# -- broken profiles ---------------------------------------------------------------------------------------
def test_broken_tools_profile_fails_the_tool_call_metrics(broken_tools):
    got = values(broken_tools)
    assert got["query_success_rate"] == (pytest.approx((39 / 42 + 39 / 41) / 2), 83, "fail")
    assert got["tool_calls_match_rate"] == (pytest.approx((31 / 34 + 30 / 34) / 2), 68, "fail")
    assert got["schema_accuracy"] == (pytest.approx((12 / 17 + 10 / 16) / 2), 33, "fail")
    assert got["trigger_f1"] == (pytest.approx((18 / 19 + 16 / 18) / 2), 78, "fail")
    assert got["trigger_recall"][:2] == (pytest.approx((18 / 20 + 16 / 20) / 2), 78)
    for kept in ("error_only_reasoning_rate", "language_following_success_rate", "scenario_check_pass_rate"):
        assert got[kept][2] == "pass", kept
    s1, s2 = (loop_summary_file(broken_tools, i, "sim_broken_tools") for i in (1, 2))
    pick = ("all_count", "tool_calls_finish_tool_calls", "tool_calls_finish_stop", "tool_calls_successful_count",
            "tool_calls_schema_validation_error_count")
    assert [s1[k] for k in pick] == [42, 17, 2, 12, 5]
    assert [s2[k] for k in pick] == [41, 16, 3, 10, 6]
    sims = summary(broken_tools)["trigger_similarity"]
    assert [(t["tp"], t["fp"], t["fn"], t["tn"]) for t in sims] == [(18, 0, 2, 19), (16, 0, 4, 19)]
    assert sims[0]["baseline"].endswith("loop_01/results.jsonl")
    reasons = [r["tool_calls_reason"] for r in loop_rows(broken_tools, 1) if r.get("tool_calls_valid") is False]
    assert any("merges a command" in x for x in reasons) and any("not valid JSON" in x for x in reasons)
    assert summary(broken_tools)["verdict"] == "fail"


def test_broken_text_profile_fails_the_text_metrics(broken_text):
    got = values(broken_text)
    assert got["error_only_reasoning_rate"] == (pytest.approx((0 + 3 / 39) / 2), 78, "fail")
    assert got["language_following_success_rate"] == (pytest.approx((2 / 8 + 1 / 6) / 2), 14, "fail")
    assert got["repeat_ngram_pass_rate"] == (pytest.approx((5 / 7 + 3 / 6) / 2), 13, "fail")  # REPEAT_STRICT
    assert got["scenario_check_pass_rate"] == (0.5, 6, "fail")
    for kept in ("query_success_rate", "tool_calls_match_rate", "schema_accuracy", "trigger_f1"):
        assert got[kept][2] == "pass", kept
    assert got["trigger_f1"][0] == 1.0
    s2 = loop_summary_file(broken_text, 2, "sim_broken_text")
    assert (s2["error_only_reasoning_count"], s2["language_following_invalid_count"],
            s2["error_repeating_invalid_count"], s2["scenario_check_invalid_count"]) == (3, 5, 3, 2)
    rows = [r for loop in (1, 2) for r in loop_rows(broken_text, loop)]
    leaked = [r for r in rows if r.get("language_following_valid") is False]
    assert leaked and all(textscan.has_cyrillic([r["response"]["choices"][0]["message"]["content"]])[0] for r in leaked)
    swapped = [r["scenario_check_detail"] for r in rows if r.get("scenario_check_valid") is False]
    assert {"expected": ["path", "start_line", "end_line"], "actual": ["end_line", "start_line", "path"]} in swapped


# -- baseline, SIGKILL and resume ------------------------------------------------------------------------
def test_official_against_its_baseline_survives_sigkill_and_resume(work, official, tmp_path):
    env = {**os.environ, **work[1]}
    args = ["recipe=verifier_demo", f"output_root={tmp_path}", "progress=false", f"verifier.baseline={official}",
            "provider.concurrency=2", "provider.sim.latency_ms=40", "cache.enabled=false"]
    proc = subprocess.Popen([sys.executable, "-m", "eval752.cli", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, run_dir = time.time() + 60, None
    while time.time() < deadline:
        files = list(tmp_path.glob("runs/*/loop_01/results.jsonl"))
        if files and files[0].read_text().count("\n") >= 12:
            run_dir = files[0].parents[1]
            break
        time.sleep(0.02)
    assert run_dir is not None, "run never got going"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert not (run_dir / "summary.json").exists()
    before = sum(p.read_text().count("\n") for p in run_dir.glob("loop_*/results.jsonl"))
    assert 12 <= before < 78

    r = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path, env=work[1])
    assert r.returncode == 0, r.stderr
    assert Path(last_line(r.stdout)) == run_dir
    for loop in (1, 2):
        indexes = [row["data_index"] for row in loop_rows(run_dir, loop)]
        assert sorted(indexes) == list(range(1, 40))  # exactly one row per data_index: none lost, none doubled
    s = summary(run_dir)
    assert s["run"]["requests_sent"] == 78 - before and s["counts"]["rows"] == 78
    assert values(run_dir)["trigger_f1"] == (1.0, 78, "pass")
    assert [t["f1"] for t in s["trigger_similarity"]] == [1.0, 1.0]
    ref = values(official)
    assert {k: v for k, v in values(run_dir).items() if k in ref} == ref
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "complete"


def test_resume_sends_failed_rows_again(work, tmp_path):
    failing = "provider.sim.behaviours=[official,{name:fail_requests,rate:0.25}]"
    r = run_cli(["recipe=verifier_demo", f"output_root={tmp_path}", "progress=false", "verifier.loops=1",
                 "provider.max_retries=0", failing], cwd=tmp_path, env=work[1])
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    first = loop_rows(run_dir, 1)
    failed = sorted(row["data_index"] for row in first if row["status"] == "failed")
    assert len(first) == 39 and len(failed) == 13
    assert values(run_dir)["query_success_rate"] == (26 / 39, 39, "fail")
    assert all(row["response"]["error"] and row["finish_reason"] is None for row in first if row["status"] == "failed")

    again = run_cli([f"resume={run_dir}", "progress=false", "provider.max_retries=4"], cwd=tmp_path, env=work[1])
    assert again.returncode == 0, again.stderr
    assert "13 failed or duplicate rows will be sent again" in again.stderr
    rows = loop_rows(run_dir, 1)
    assert sorted(row["data_index"] for row in rows) == list(range(1, 40))
    assert {row["status"] for row in rows} == {"success"}
    assert summary(run_dir)["run"]["requests_sent"] >= 13 and summary(run_dir)["counts"]["ok"] == 39


# -- rescoring recorded loops ----------------------------------------------------------------------------
def test_rescoring_finished_loops_gives_identical_fields(official, broken_tools, broken_text):
    for run_dir, provider in ((official, "sim_official"), (broken_tools, "sim_broken_tools"),
                              (broken_text, "sim_broken_text")):
        for loop in (1, 2):
            live = sorted(loop_rows(run_dir, loop), key=lambda r: r["data_index"])
            rescored, loop_summary = rescore_results(run_dir / f"loop_{loop:02d}" / "results.jsonl", SAMPLE)
            assert [r["data_index"] for r in rescored] == [r["data_index"] for r in live]
            for a, b in zip(live, rescored):
                fields = {k: a.get(k, "absent") for k in VALIDATOR_FIELDS}
                assert fields == {k: b.get(k, "absent") for k in VALIDATOR_FIELDS}
            assert loop_summary == loop_summary_file(run_dir, loop, provider)


# -- a Hydra sweep over the vendor profiles --------------------------------------------------------------
def test_vendor_sweep_runs_three_profiles(work, tmp_path):
    r = run_cli(["recipe=minimax_verifier", "sweep=vendors", f"hydra.sweep.dir={tmp_path}/sweep", "verifier.loops=1",
                 "progress=false"], cwd=tmp_path, env=work[1])
    assert r.returncode == 0, r.stderr
    # run folders name only the swept key (issue 7), in job order
    dirs = [tmp_path / "sweep" / f"provider={p}" for p in ("sim_official", "sim_broken_tools", "sim_broken_text")]
    assert sorted(p.parent for p in (tmp_path / "sweep").glob("*/summary.json")) == sorted(dirs)
    assert [summary(d)["verdict"] for d in dirs] == ["pass", "fail", "fail"]
    assert Path(last_line(r.stdout)) == dirs[-1]


def test_bad_verifier_settings_are_one_clear_error(work, tmp_path):
    r = run_cli(["recipe=verifier_demo", f"output_root={tmp_path}", "verifier.thresholds.trigger_f=0.9"],
                cwd=tmp_path, env=work[1])
    assert r.returncode == 2 and "did you mean 'trigger_f1'" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(["recipe=verifier_demo", f"output_root={tmp_path}", f"verifier.baseline={tmp_path}/nothing"],
                cwd=tmp_path, env=work[1])
    assert r.returncode == 2 and "no such file or folder" in r.stderr


def test_threshold_spellings():
    assert parse_threshold("trigger_f1", ">= 0.9") == Threshold("at_least", 0.9)
    assert parse_threshold("error_only_reasoning_rate", "<= 0.01") == Threshold("at_most", 0.01)
    assert parse_threshold("tool_calls_match_rate", "1.0 +- 0.02") == Threshold("within", 1.0, 0.02)
    assert parse_threshold("tool_calls_match_rate", 0.97) == Threshold("within", 0.97, 0.01)  # default kind kept
    assert parse_threshold("schema_accuracy", {"kind": "at_least", "target": 0.9}) == Threshold("at_least", 0.9)
    with pytest.raises(ConfigError):
        parse_threshold("schema_accuracy", "about 0.9")
    with pytest.raises(ConfigError, match="did you mean 'schema_accuracy'"):
        parse_thresholds({"schema_acuracy": 0.9})


# -- the defects on their own ----------------------------------------------------------------------------
def _draft(row_index: int, *behaviours: str | dict, seed_param: int = 0) -> tuple[dict, Draft, dict]:
    prompt_row = load_prompt_rows(SAMPLE)[row_index - 1]
    body = {"messages": [dict(m) for m in prompt_row.body["messages"]], "tools": prompt_row.tools, "seed": seed_param}
    body["messages"] = [{**m, "role": "system"} if m["role"] == "_input" else m for m in body["messages"]]
    entry = {"id": str(row_index), "type": "verifier", "text": "",
             "answer": {"expected_tool_call": prompt_row.expected_tool_call, "checks": list(prompt_row.validators())}}
    settings = SimSettings()
    prompt = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    ctx = RequestContext(settings, body, json.dumps(body).encode(), str(row_index), entry, prompt, None, {})
    draft = Draft()
    for spec in ("official", *behaviours):
        spec = {"name": spec} if isinstance(spec, str) else spec
        name, opts = spec["name"], {k: v for k, v in spec.items() if k != "name"}
        draft = create(name, settings, **opts).after(ctx, draft)
    message = {"role": "assistant", "content": draft.content, "tool_calls": draft.tool_calls,
               "reasoning_content": draft.reasoning}
    return body, draft, {"choices": [{"message": message, "finish_reason": draft.finish_reason}]}


def test_tool_call_defects_break_what_the_validator_checks():
    body, draft, _ = _draft(1)
    assert draft.finish_reason == "tool_calls"
    assert validate_tool_call(draft.tool_calls[0], body["tools"]) == (True, None)
    body, draft, _ = _draft(1, "merge_shell_args")
    assert json.loads(draft.tool_calls[0]["function"]["arguments"]) == {"command": ["ls -la"]}
    assert "merges a command" in validate_tool_call(draft.tool_calls[0], body["tools"])[1]
    reasons = set()
    for seed in range(8):
        body, draft, _ = _draft(15, "invalid_tool_args", seed_param=seed)
        ok, reason = validate_tool_call(draft.tool_calls[0], body["tools"])
        assert not ok
        reasons.add(reason.split(" ")[-1] if "JSON" not in reason else "json")
    assert reasons == {"json", "property"}  # both modes: cut-off JSON and a missing required property
    _, draft, _ = _draft(2, "drop_tool_calls")
    assert draft.tool_calls == [] and draft.finish_reason == "stop" and draft.content
    _, draft, _ = _draft(7, "resort_json_keys")
    assert list(json.loads(draft.tool_calls[0]["function"]["arguments"])) == ["start_time", "title"]
    _, draft, _ = _draft(2, {"name": "drop_tool_calls", "rate": 0.0})
    assert draft.finish_reason == "tool_calls"


def test_text_defects_break_what_the_validator_checks():
    _, draft, response = _draft(18, "reasoning_only")
    assert draft.content == "" and draft.reasoning and is_error_only_reasoning(response)
    _, draft, _ = _draft(20, "cyrillic_leak")
    assert textscan.has_cyrillic([draft.content])[0] and draft.content.startswith(_draft(20)[1].content[:5])
    _, clean, _ = _draft(21)
    _, looped, _ = _draft(21, "repetition_loop")
    assert not textscan.ngram_repeats([clean.content])[0] and textscan.ngram_repeats([looped.content])[0]
    body, draft, _ = _draft(33)
    assert scenario_fields(body, draft.content, "success")["scenario_check_valid"] is True
    body, draft, _ = _draft(33, "resort_json_keys")
    assert scenario_fields(body, draft.content, "success")["scenario_check_detail"]["actual"] == [
        "attendees", "duration_minutes", "start_time", "title"]
    assert reverse_listed_names("a: x, y and z", ["x", "y", "z"]) == "a: z, y and x"
    assert reverse_listed_names("just x here", ["x", "y"]) == "just x here"


def test_fail_requests_is_a_500_drawn_per_attempt():
    settings = SimSettings(seed=3)
    fault = create("fail_requests", settings, rate=0.5)
    counter: dict[str, int] = {}
    statuses = []
    for i in range(40):
        body = {"messages": [{"role": "user", "content": f"q{i}"}]}
        ctx = RequestContext(settings, body, json.dumps(body).encode(), None, None, f"q{i}", None, counter)
        response = asyncio.run(fault.before(ctx))
        statuses.append(None if response is None else response.status)
    assert set(statuses) == {None, 500} and 10 <= statuses.count(500) <= 30
