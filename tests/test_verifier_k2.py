"""The K2-Vendor-Verifier flavour: K2VV's rows, results, summary and metrics on hand-built rows (exact values),
the offline re-scorer and its format detection, and the ``eval752`` command end to end against the simulated
vendor (eval752/data/k2_sample.jsonl: 12 rows, 7 should call a tool, 5 should answer in text)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import last_line, run_cli
from eval752.errors import ConfigError, InputFormatError
from eval752.scoring import detect_format
from eval752.verifier import (
    compare_k2,
    k2_aggregate,
    k2_request,
    k2_summary,
    k2_trigger_similarity,
    k2_validate_tool_call,
    load_k2_baseline,
    load_k2_results,
    load_k2_summary,
    load_prompt_rows,
    parse_prompt_row,
    prompt_row_to_request,
    rescore_k2_results,
)
from eval752.verifier.aggregate import Threshold
from eval752.verifier.k2 import K2_SUMMARY_KEYS, k2_hash, k2_metrics, k2_result_row, k2_table_row

SAMPLE = Path(__file__).resolve().parents[1] / "eval752" / "data" / "k2_sample.jsonl"

TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]}}}
REQUEST = {"model": "kimi", "messages": [{"role": "user", "content": "x"}], "tools": [TOOL]}


def completion(finish, content=None, calls=None):
    message = {"role": "assistant", "content": content}
    if calls is not None:
        message["tool_calls"] = calls
    return {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": finish, "message": message}]}


def call(name="lookup", arguments='{"q": "a"}'):
    return {"id": f"functions.{name}:0", "type": "function", "function": {"name": name, "arguments": arguments}}


def row(idx, status, response, **extra):
    return k2_result_row(idx, REQUEST, status, response, **extra)


def hand_rows():
    """Eight rows covering every branch of K2VV's summary."""
    return [
        row(1, "success", completion("tool_calls", calls=[call()])),                       # valid call
        row(2, "success", completion("tool_calls", calls=[call(arguments='{"q": ')])),      # not JSON
        row(3, "success", completion("tool_calls", calls=[call(), call(arguments='{"n": 2}')])),  # 2nd misses q
        row(4, "success", completion("tool_calls", content="", calls=[])),                 # no calls at all
        row(5, "success", completion("stop", content="hi")),
        row(6, "success", completion("length", content="...")),
        row(7, "failed", {"error": "HTTP 500"}),
        row(8, "success", completion("content_filter", content="")),
    ]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# -- rows and requests --------------------------------------------------------------------------------------
def test_k2_sample_rows_load_as_prompt_rows():
    prompts = load_prompt_rows(SAMPLE)
    assert [p.data_index for p in prompts] == list(range(1, 13))
    assert all(p.expected_tool_call is None and p.check_types == () for p in prompts)  # K2VV rows carry no labels
    assert all(p.validators() == ("tool_calls",) for p in prompts)
    assert sum(1 for p in prompts if p.tools) == 10
    req = k2_request(prompts[2], model="kimi-k2")
    assert req["messages"][0]["role"] == "system" and req["model"] == "kimi-k2" and req["max_tokens"] == 2048
    assert prompts[2].body["messages"][0]["role"] == "_input"  # the row itself is not modified
    assert "model" not in k2_request(prompts[0])


def test_k2_request_sends_history_as_written():
    """K2VV changes only the _input role; the MiniMax flavour also renames repeated ids and reasoning fields."""
    def calls():
        return [{"id": "functions.f:0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]

    raw = {"messages": [
        {"role": "_input", "content": "s"}, {"role": "user", "content": "a"},
        {"role": "assistant", "content": "", "reasoning": "think", "tool_calls": calls()},
        {"role": "tool", "tool_call_id": "functions.f:0", "content": "1"},
        {"role": "assistant", "content": "", "tool_calls": calls()},
        {"role": "tool", "tool_call_id": "functions.f:0", "content": "2"}, {"role": "user", "content": "b"}],
        "tools": json.dumps([TOOL]), "temperature": 1.0, "stream": False,
        "should_call_tool": True, "official_finish_reason": "tool_calls"}  # evalscope's copy: encoded, labelled
    prow = parse_prompt_row(raw, 1)
    k2 = k2_request(prow)
    assert k2["messages"][4]["tool_calls"][0]["id"] == "functions.f:0"
    assert k2["messages"][2]["reasoning"] == "think" and "reasoning_content" not in k2["messages"][2]
    assert [m["role"] for m in k2["messages"]][:2] == ["system", "user"]
    assert k2["temperature"] == 1.0 and k2["stream"] is False and k2["tools"] == [TOOL]
    assert "should_call_tool" not in k2 and "official_finish_reason" not in k2
    minimax = prompt_row_to_request(prow)
    assert minimax["messages"][4]["tool_calls"][0]["id"] == "functions.f:1"


def test_k2_hash_is_md5_of_sorted_json():
    assert k2_hash({"b": 1, "a": "é"}) == k2_hash({"a": "é", "b": 1})
    import hashlib

    assert k2_hash({"a": "é"}) == hashlib.md5('{"a": "é"}'.encode()).hexdigest()


# -- schema validation --------------------------------------------------------------------------------------
@pytest.mark.parametrize("the_call, tools, valid, reason", [
    (call(), [TOOL], True, None),
    (call(arguments={"q": "a", "n": 1}), [TOOL], True, None),                      # arguments as an object
    (call(arguments='{"q": 1}'), [TOOL], False, "do not match its schema"),
    (call(arguments="{'q': 'a'}"), [TOOL], False, "not valid JSON"),
    (call(name="other"), [TOOL], False, "no schema for tool 'other'"),
    (call(), [{"type": "function", "function": {"name": "lookup", "parameters": {}}}], False, "no schema"),
    (call(), [{"type": "function", "function": {"name": "lookup"}}], False, "has no parameters"),
    (call(), [{"type": "function"}, TOOL], False, "no function name"),            # K2VV's lookup fails outright
    ({"id": "x"}, [TOOL], False, "malformed tool call"),
    (call(arguments='{"command": ["ls -la"]}'), [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}}}],
     True, None),                                                                 # no argv lint in K2VV
])  # fmt: skip
def test_k2_validate_tool_call(the_call, tools, valid, reason):
    ok, why = k2_validate_tool_call(the_call, tools)
    assert ok is valid
    assert (why is None) if reason is None else (reason in why)


# -- summary and metrics ------------------------------------------------------------------------------------
def test_k2_rows_and_summary_exact():
    rows = hand_rows()
    assert list(rows[0])[:9] == ["data_index", "request", "response", "status", "finish_reason", "tool_calls_valid",
                                 "last_run_at", "duration_ms", "hash"]
    assert [r["tool_calls_valid"] for r in rows] == [True, False, False, None, None, None, None, None]
    assert [r["finish_reason"] for r in rows] == ["tool_calls"] * 4 + ["stop", "length", None, "content_filter"]
    assert "no tool calls" in rows[3]["tool_calls_reason"] and "'q' is a required" in rows[2]["tool_calls_reason"]
    s = k2_summary(rows, model="kimi")
    assert list(s) == list(K2_SUMMARY_KEYS)
    assert s == {"model": "kimi", "success_count": 7, "failure_count": 1, "finish_stop": 1, "finish_tool_calls": 4,
                 "finish_others": 2, "finish_others_detail": {"length": 1, "content_filter": 1},
                 "schema_validation_error_count": 3, "successful_tool_call_count": 1}
    assert k2_metrics(s) == {"query_success_rate": {"value": 7 / 8, "num": 8},
                             "schema_accuracy": {"value": 1 / 4, "num": 4}}
    assert k2_table_row(s) == {"tool_call_f1": None, "tool_call_precision": None, "tool_call_recall": None,
                               "count_finish_reason_tool_calls": 4, "count_successful_tool_call": 1,
                               "schema_accuracy": 0.25}
    empty = k2_summary([], model="m")
    assert k2_metrics(empty) == {"query_success_rate": {"value": None, "num": 0},
                                 "schema_accuracy": {"value": None, "num": 0}}


def test_k2_trigger_similarity_pairs_by_data_index():
    finishes_official = {1: "tool_calls", 2: "tool_calls", 3: "stop", 4: "tool_calls", 5: "length", 6: "stop"}
    finishes_vendor = {2: "tool_calls", 3: "tool_calls", 4: "stop", 5: None, 6: "stop", 7: "tool_calls"}
    official = [{"data_index": i, "finish_reason": f} for i, f in finishes_official.items()]
    vendor = [{"data_index": i, "response": completion(f) if f else {"error": "x"}} for i, f in finishes_vendor.items()]
    sim = k2_trigger_similarity(official, vendor)
    # pairs 2..6: TP {2}, FP {3}, FN {4}, TN {5 (failed vs length), 6}
    assert sim == {"tool_call_f1": 0.5, "tool_call_precision": 0.5, "tool_call_recall": 0.5,
                   "tp": 1, "fp": 1, "fn": 1, "tn": 2, "samples_used": 5,
                   "fp_data_indexes": [3], "fn_data_indexes": [4],
                   "missing_data_indexes": [1], "extra_data_indexes": [7]}
    none = k2_trigger_similarity(official[2:3], [{"data_index": 3, "finish_reason": "stop"}])
    assert (none["tool_call_f1"], none["tn"]) == (0.0, 1)
    # 3 TP, 1 FP, 2 FN: P = 3/4, R = 3/5, F1 = 2PR/(P+R) = 2/3
    o = [{"data_index": i, "finish_reason": "tool_calls" if i <= 5 else "stop"} for i in range(1, 8)]
    v = [{"data_index": i, "finish_reason": "tool_calls" if i in (1, 2, 3, 6) else "stop"} for i in range(1, 8)]
    sim = k2_trigger_similarity(o, v)
    assert (sim["tp"], sim["fp"], sim["fn"], sim["tn"]) == (3, 1, 2, 1)
    assert sim["tool_call_precision"] == 0.75 and sim["tool_call_recall"] == 0.6
    assert sim["tool_call_f1"] == pytest.approx(2 / 3)


def test_k2_aggregate_and_verdicts():
    s1 = k2_summary(hand_rows(), model="m")  # schema 1/4, success 7/8
    s2 = k2_summary(hand_rows()[:1] + hand_rows()[4:6], model="m")  # schema 1/1, success 3/3
    sim = {"tool_call_f1": 0.8, "tool_call_precision": 1.0, "tool_call_recall": 2 / 3, "samples_used": 8}
    out = k2_aggregate([s1, s2], [sim, None])
    m = out["metrics"]
    assert list(m) == ["query_success_rate", "schema_accuracy", "trigger_f1", "trigger_precision", "trigger_recall"]
    assert (m["schema_accuracy"]["value"], m["schema_accuracy"]["num"]) == (0.625, 5)
    assert m["schema_accuracy"]["loops"] == [0.25, 1.0] and m["schema_accuracy"]["verdict"] == "fail"
    assert (m["query_success_rate"]["value"], m["query_success_rate"]["num"]) == ((7 / 8 + 1) / 2, 11)
    assert m["trigger_f1"] == {**m["trigger_f1"], "value": 0.8, "num": 8, "loops": [0.8, None],
                               "threshold": ">= 0.73", "verdict": "pass"}
    assert "verdict" not in m["trigger_recall"] and out["verdict"] == "fail"
    relaxed = k2_aggregate([s1, s2], [sim, None], {"schema_accuracy": Threshold("at_least", 0.6),
                                                   "query_success_rate": Threshold("at_least", 0.9),
                                                   "trigger_f1": Threshold("at_least", 0.8)})
    assert relaxed["verdict"] == "pass"
    assert k2_aggregate([k2_summary([], model="m")])["verdict"] == "n/a"


# -- reading K2VV files ---------------------------------------------------------------------------------------
def test_load_k2_results_keeps_latest_and_reports_problems(tmp_path):
    a = {"data_index": 2, "status": "failed", "finish_reason": None, "last_run_at": "2025-11-15T10:00:00"}
    b = {"data_index": 1, "status": "success", "finish_reason": "stop", "last_run_at": "2025-11-15T10:00:01"}
    c = {"data_index": 2, "status": "success", "finish_reason": "tool_calls", "last_run_at": "2025-11-15T11:00:00"}
    d = {"data_index": 1, "status": "failed", "finish_reason": None, "last_run_at": "2025-11-15T09:00:00"}
    rows, notes = load_k2_results(write_jsonl(tmp_path / "r.jsonl", [a, b, c, d]))
    assert [(r["data_index"], r["status"]) for r in rows] == [(1, "success"), (2, "success")]
    assert len(notes) == 1 and "2 repeated data_index rows dropped" in notes[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"data_index": "3"}\nnot json\n{"data_index": 4, "status": "ok"}\n'
                   '{"data_index": 5, "response": "text"}\n{"data_index": 6, "tool_calls_valid": "yes"}\n')
    with pytest.raises(InputFormatError) as exc:
        load_k2_results(bad)
    text = str(exc.value)
    for where in ("bad.jsonl:1: data_index", "bad.jsonl:2: (line)", "bad.jsonl:3: status", "bad.jsonl:4: response",
                  "bad.jsonl:5: tool_calls_valid"):
        assert where in text, where


def test_k2_summary_file_and_summary_only_baseline(tmp_path):
    official = k2_summary(hand_rows(), model="kimi-k2-thinking")
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(official, indent=4))
    assert load_k2_summary(path) == official
    [base] = load_k2_baseline(path)
    assert base.rows is None and base.summary == official
    vendor_rows = hand_rows()[:1] + hand_rows()[4:]
    vendor = k2_summary(vendor_rows, model="v")
    cmp = compare_k2(base, vendor_rows, vendor)
    assert cmp["trigger_similarity"] is None and cmp["vendor"]["tool_call_f1"] is None
    assert cmp["counts"]["finish_tool_calls"] == {"official": 4, "vendor": 1, "delta": -3}
    assert cmp["counts"]["schema_validation_error_count"] == {"official": 3, "vendor": 0, "delta": -3}
    assert cmp["official"]["schema_accuracy"] == 0.25 and cmp["vendor"]["schema_accuracy"] == 1.0
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"model": "m", "success_count": 1}))
    with pytest.raises(InputFormatError, match="failure_count: required"):
        load_k2_summary(broken)
    with pytest.raises(ConfigError, match="no such file"):
        load_k2_baseline(tmp_path / "absent")
    folder = tmp_path / "published"
    folder.mkdir()
    write_jsonl(folder / "kimi-k2-thinking_results.jsonl", hand_rows())
    [base] = load_k2_baseline(folder)
    assert base.summary == {**official, "model": "kimi"} and len(base.rows) == 8  # model from the requests


def test_rescore_k2_results_offline(tmp_path):
    recorded = hand_rows()
    for r in recorded:  # recorded verdicts that disagree with the responses are recomputed
        r["tool_calls_valid"] = True
    trimmed = {"data_index": 9, "status": "success", "finish_reason": "tool_calls", "tool_calls_valid": True}
    path = write_jsonl(tmp_path / "results.jsonl", recorded + [trimmed])
    rows, summary, notes = rescore_k2_results(path)
    assert notes == [] and [r["tool_calls_valid"] for r in rows][:4] == [True, False, False, None]
    assert rows[8]["tool_calls_valid"] is True  # no response: the recorded fields stand
    assert (summary["model"], summary["finish_tool_calls"], summary["successful_tool_call_count"]) == ("kimi", 5, 2)
    # with the prompt file, tools come from the prompt line: row 1 of a file whose tool wants an integer q
    prompts = write_jsonl(tmp_path / "samples.jsonl", [{"messages": [{"role": "user", "content": "x"}], "tools": [
        {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {
            "q": {"type": "integer"}}}}}]}] * 9)
    rows, summary, _ = rescore_k2_results(path, prompts, model="named")
    assert rows[0]["tool_calls_valid"] is False and summary["model"] == "named"
    short = write_jsonl(tmp_path / "short.jsonl", [{"messages": [{"role": "user", "content": "x"}]}])
    with pytest.raises(InputFormatError, match="8 rows have no line"):
        rescore_k2_results(path, short)


def test_detect_format_tells_k2_from_minimax(tmp_path):
    k2 = write_jsonl(tmp_path / "k2.jsonl", hand_rows()[:1])
    assert detect_format(k2) == "k2"
    minimax = write_jsonl(tmp_path / "mm.jsonl", [{"data_index": 1, "response": completion("stop"),
                                                   "tool_calls_finish_reason": "stop", "tool_calls_valid": None,
                                                   "error_only_reasoning_checked": True}])
    assert detect_format(minimax) == "verifier"
    trimmed = write_jsonl(tmp_path / "trim.jsonl", [{"data_index": 1, "finish_reason": "stop"}])
    assert detect_format(trimmed) == "verifier"


# -- the eval752 command end to end ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("k2")
    return root, {"EVAL752_CACHE_DIR": str(root / "cache")}


def k2_cli(work, *args: str, expect: int = 0):
    root, env = work
    r = run_cli(["recipe=k2_verifier", f"output_root={root}", "progress=false", *args], cwd=root, env=env)
    assert r.returncode == expect, r.stderr
    return r


def score_cli(work, *args: str):
    root, env = work
    r = run_cli([f"output_root={root}", *args], cwd=root, env={**env, "EVAL752_ENTRY": "score"})
    return r


def loaded(path: Path):
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def official(work) -> Path:
    return Path(last_line(k2_cli(work, "verifier.fail_on_verdict=true").stdout))


@pytest.fixture(scope="module")
def broken(work, official):
    r = k2_cli(work, "provider=sim_broken_tools", "verifier.loops=2", f"verifier.baseline={official}")
    return Path(last_line(r.stdout))


def test_official_profile_passes(official):
    s = loaded(official / "summary.json")
    assert s["flavour"] == "k2" and s["verdict"] == "pass"
    assert {k: (m["value"], m["num"], m["verdict"]) for k, m in s["metrics"].items()} == {
        "query_success_rate": (1.0, 12, "pass"), "schema_accuracy": (1.0, 7, "pass")}
    assert loaded(official / "loop_01" / "summary.json") == {
        "model": "minimax-sim", "success_count": 12, "failure_count": 0, "finish_stop": 5, "finish_tool_calls": 7,
        "finish_others": 0, "finish_others_detail": {}, "schema_validation_error_count": 0,
        "successful_tool_call_count": 7}
    rows = [json.loads(x) for x in (official / "loop_01" / "results.jsonl").read_text().splitlines()]
    assert [r["data_index"] for r in rows] == list(range(1, 13))
    assert [r["data_index"] for r in rows if r["finish_reason"] == "tool_calls"] == [1, 2, 3, 6, 7, 10, 11]
    assert all(r["hash"] == k2_hash(r["request"]) and isinstance(r["duration_ms"], int) for r in rows)
    assert rows[2]["request"]["messages"][0]["role"] == "system" and rows[2]["request"]["max_tokens"] == 2048
    assert loaded(official / "manifest.json")["verifier"]["flavour"] == "k2"
    report = loaded(official / "k2_report.json")
    assert report["average"] == {"tool_call_f1": None, "count_finish_reason_tool_calls": 7,
                                 "count_successful_tool_call": 7, "schema_accuracy": 1.0}


def test_broken_vendor_against_official_baseline(broken, work):
    s = loaded(broken / "summary.json")
    got = {k: (m["value"], m["num"], m.get("verdict")) for k, m in s["metrics"].items()}
    assert got["schema_accuracy"] == (pytest.approx((5 / 7 + 4 / 5) / 2), 12, "fail")
    assert got["trigger_f1"] == (pytest.approx((1.0 + 10 / 12) / 2), 24, "pass")
    assert got["trigger_recall"][:2] == (pytest.approx((1.0 + 5 / 7) / 2), 24)
    assert s["verdict"] == "fail"
    assert [c["trigger"] for c in s["comparison"]] == [
        {"tp": 7, "fp": 0, "fn": 0, "tn": 5, "samples_used": 12},
        {"tp": 5, "fp": 0, "fn": 2, "tn": 5, "samples_used": 12}]
    cmp2 = loaded(broken / "loop_02" / "comparison.json")
    assert cmp2["trigger_similarity"]["fn_data_indexes"] == [2, 11]  # drop_tool_calls fired there
    assert cmp2["counts"]["finish_tool_calls"] == {"official": 7, "vendor": 5, "delta": -2}
    assert cmp2["baseline"].endswith("loop_01/results.jsonl")  # one official loop serves both vendor loops


def test_fail_on_verdict_exit_status(work, official):
    r = k2_cli(work, "provider=sim_broken_tools", f"verifier.baseline={official}/loop_01/results.jsonl",
               "verifier.fail_on_verdict=true", expect=1)
    assert "verdict FAIL (schema_accuracy)" in r.stderr
    run_dir = Path(last_line(r.stdout))
    assert loaded(run_dir / "summary.json")["verdict"] == "fail"  # every file is written before the exit
    root, _ = work
    bad = run_cli(["recipe=k2_verifier", f"output_root={root}", "verifier.flavour=k3"], cwd=root)
    assert bad.returncode == 2 and "verifier.flavour must be minimax or k2" in bad.stderr


def test_rescore_cli_detects_k2_and_compares(work, official, broken):
    r = score_cli(work, f"input={broken}/loop_02/results.jsonl", f"verifier.baseline={official}/loop_01/results.jsonl",
                  "diagnostics.enabled=false")
    assert r.returncode == 0, r.stderr
    out = loaded(Path(last_line(r.stdout)) / "summary.json")
    assert out["format"] == "k2" and out["k2_summary"]["finish_tool_calls"] == 5
    assert out["metrics"]["trigger_f1"]["value"] == pytest.approx(10 / 12)
    assert out["metrics"]["schema_accuracy"] == {"value": 0.8, "num": 5, "verdict": "fail"}
    r = score_cli(work, f"input={broken}/loop_02/results.jsonl", "format=k2",
                  f"verifier.baseline={official}/loop_01/summary.json", "verifier.fail_on_verdict=true",
                  "diagnostics.enabled=false")
    assert r.returncode == 1 and "verdict FAIL" in r.stderr
    out = loaded(Path(last_line(r.stdout)) / "summary.json")
    assert out["comparison"]["trigger_similarity"] is None and "trigger_f1" not in out["metrics"]
    assert out["comparison"]["counts"]["successful_tool_call_count"] == {"official": 7, "vendor": 4, "delta": -3}


def test_fail_on_verdict_in_the_minimax_flavour(work):
    root, env = work
    args = ["recipe=verifier_demo", f"output_root={root}", "progress=false", "verifier.loops=1",
            "provider=sim_broken_tools", "dataset.limit=12"]
    assert run_cli(args, cwd=root, env=env).returncode == 0  # default: a failed verdict is only reported
    r = run_cli([*args, "verifier.fail_on_verdict=true"], cwd=root, env=env)
    assert r.returncode == 1 and "verdict FAIL (" in r.stderr
    assert loaded(Path(last_line(r.stdout)) / "summary.json")["verdict"] == "fail"
