"""Official MiniMax-Provider-Verifier aggregates: per-loop summaries are internally consistent, eval752's
summaries have their shape, and eval752 reproduces each ``metrics_report.json`` exactly."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval752.verifier import (
    aggregate_loops,
    build_batch_report,
    build_metrics_report,
    load_loop_summaries,
    loop_summary,
    parse_prompt_row,
    score_rows,
    upstream_loop_metrics,
)

OUTPUT_DIR = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "minimax" / "output-dir"
MODEL_DIRS = sorted(p for p in OUTPUT_DIR.iterdir() if p.is_dir()) if OUTPUT_DIR.is_dir() else []

pytestmark = pytest.mark.skipif(not MODEL_DIRS, reason=f"real data not present at {OUTPUT_DIR}")
params = pytest.mark.parametrize("model_dir", MODEL_DIRS or [None], ids=lambda p: p.name if p else "absent")


def _eval752_summary_like_upstream() -> dict:
    """A summary eval752 builds from rows that ran the same validators as upstream's sample."""
    tool = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}}
    base = {"messages": [{"role": "user", "content": "q"}], "tools": [tool]}
    prompts = [
        parse_prompt_row({**base, "expected_tool_call": True}, 1),
        parse_prompt_row({**base, "expected_tool_call": False}, 2),
        parse_prompt_row({"messages": [{"role": "user", "content": "q"}], "check_type": ["contains_russian_characters_unicode"]}, 3),
        parse_prompt_row({**base, "check_type": ["scenario_check"], "expected_tool_call": False}, 4),
    ]
    msg = lambda content, finish, calls=None: {"choices": [{"index": 0, "finish_reason": finish, "message": {  # noqa: E731
        "role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})}}]}
    responses = [
        msg(None, "tool_calls", [{"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"a": "x"}'}}]),
        msg("no", "stop"),
        msg("hello", "stop"),
        msg("a then b", "stop"),
    ]
    return loop_summary(score_rows(prompts, responses), model="m")


@params
def test_loop_summaries_are_internally_consistent(model_dir):
    loops = load_loop_summaries(model_dir)
    assert len(loops) == 10
    ours = _eval752_summary_like_upstream()
    for path, s in loops:
        where = str(path)
        assert set(s) == set(ours), where
        for key, value in ours.items():
            assert type(s[key]) is type(value), (where, key)
        tp, fn = s["tool_calls_finish_tool_calls"], s["tool_calls_finish_stop"]
        fp, tn = s["stop_finish_tool_calls"], s["stop_finish_stop"]
        assert s["tool_calls_match_rate"] == round((tp + tn) / s["expected_tool_call_total_count"], 4), where
        assert s["success_rate"] == round(s["success_count"] / s["all_count"], 2), where
        assert s["success_count"] + s["failure_count"] <= s["all_count"], where
        assert s["error_only_reasoning_rate"] == s["error_only_reasoning_count"] / s["error_only_reasoning_checked_count"]
        assert s["error_only_reasoning_checked_count"] == s["success_count"] + s["failure_count"], where
        assert tp == s["tool_calls_successful_count"] + s["tool_calls_schema_validation_error_count"], where
        assert sum(s["tool_calls_count_distribution"].values()) == tp, where
        assert s["tool_calls_total_count"] >= sum(int(k) * v for k, v in s["tool_calls_count_distribution"].items())
        assert s["tool_calls_finish_others"] == sum(s["tool_calls_finish_others_detail"].values()), where
        assert tp + fn + fp + tn + s["tool_calls_finish_others"] <= s["expected_tool_call_total_count"], where
        for prefix in ("language_following", "scenario_check"):
            assert s[f"{prefix}_checked_count"] == s[f"{prefix}_valid_count"] + s[f"{prefix}_invalid_count"], where
        assert s["scenario_check_pass_rate"] == round(s["scenario_check_valid_count"] / s["scenario_check_checked_count"], 4)


@params
def test_batch_reports_carry_the_loop_summary(model_dir):
    for path, s in load_loop_summaries(model_dir):
        batch = json.loads((path.parent / "batch_report.json").read_text(encoding="utf-8"))
        entry = batch["provider_results"][0]
        shape = build_batch_report(s, provider=entry["provider"], test_file=batch["test_file"],
                                   output_file=entry["output_file"], summary_file=entry["summary_file"],
                                   completed_at=entry["completed_at"], generated_at=batch["generated_at"])
        assert batch == shape, path


@params
def test_metrics_report_reproduced_exactly(model_dir):
    official = json.loads((model_dir / "metrics_report.json").read_text(encoding="utf-8"))
    loops = load_loop_summaries(model_dir)
    report = build_metrics_report([s for _, s in loops], files=[r["file"] for r in official["results"]])
    assert report == official  # every float bit-for-bit, keys in the same order
    assert json.dumps(report, indent=4, ensure_ascii=False) == json.dumps(official, indent=4, ensure_ascii=False)
    for (_, s), entry in zip(loops, official["results"]):
        assert upstream_loop_metrics(s) == entry["metrics"]
        assert list(upstream_loop_metrics(s)) == list(entry["metrics"])


@params
def test_official_deployments_pass_default_thresholds(model_dir):
    loops = [s for _, s in load_loop_summaries(model_dir)]
    agg = aggregate_loops(loops)
    official = json.loads((model_dir / "metrics_report.json").read_text(encoding="utf-8"))["summary"]["average_metrics"]
    assert agg["verdict"] == "pass"
    assert agg["metrics"]["schema_accuracy"]["value"] == official["4. ToolCalls-Schema-Accuracy"]
    assert agg["metrics"]["language_following_success_rate"]["value"] == official["6. Language-Following-Success-Rate"]
    assert agg["metrics"]["tool_calls_match_rate"]["num"] == 1000
    assert agg["metrics"]["tool_calls_match_rate"]["min"] >= 0.95
