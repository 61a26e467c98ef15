"""Vendor verifier: hand-built rows for every validator branch, summaries, similarity, aggregation."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from eval752.errors import InputFormatError
from eval752.types import Response, ToolCall
from eval752.verifier import (
    PromptRow,
    RowToCheck,
    Threshold,
    aggregate_loops,
    build_batch_report,
    build_metrics_report,
    count_distribution_cosine,
    is_valid_array_command,
    load_prompt_rows,
    loop_summary,
    parse_prompt_row,
    prompt_row_to_request,
    rescore_results,
    response_to_chat_completion,
    score_rows,
    trigger_similarity,
    validate_rows,
)
from eval752.verifier import textscan
from eval752.verifier.aggregate import compensated_sum

LANG = "contains_russian_characters_unicode"
REPEAT = "repeat_n_gram"
SCEN = "scenario_check"

SHELL_TOOL = {
    "type": "function",
    "function": {
        "name": "shell",
        "description": "run a command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}, "timeout": {"type": "integer"}},
            "required": [],
        },
    },
}
WEATHER_TOOL = {  # no description: allowed
    "type": "function",
    "function": {
        "name": "weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "date": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    },
}
REQUEST = {"messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER_TOOL, SHELL_TOOL]}


def completion(content=None, finish="stop", tool_calls=None, **message):
    msg = {"role": "assistant", "content": content, **message}
    if tool_calls is not None:
        msg["tool_calls"] = tool_calls
    return {"object": "chat.completion", "choices": [{"index": 0, "message": msg, "finish_reason": finish}]}


def call(name, arguments):
    return {"id": f"{name}:0", "type": "function", "function": {"name": name, "arguments": arguments}}


def check(checks, response, status="success", request=REQUEST, **kw):
    return validate_rows([RowToCheck(request, response, status, tuple(checks))], backend="python", **kw)[0]


def tool_fields(response, status="success", request=REQUEST):
    f = check(["tool_calls"], response, status, request)
    return {k: f[k] for k in ("tool_calls_finish_reason", "tool_calls_valid", "tool_calls_count", "tool_calls_reason")}


# --- prompt rows ----------------------------------------------------------------------------------------


def test_json_encoded_fields_and_empty_string_as_absent():
    raw = {
        "messages": json.dumps([{"role": "_input", "content": "sys"}, {"role": "user", "content": "q"}]),
        "tools": "",
        "check_type": json.dumps([SCEN]),
        "expected_tool_call": "",
        "scenario_check": "",
        "temperature": 0.2,
    }
    row = parse_prompt_row(raw, 7)
    assert row == PromptRow(
        data_index=7,
        body={"messages": [{"role": "_input", "content": "sys"}, {"role": "user", "content": "q"}], "temperature": 0.2},
        check_types=(SCEN,),
        expected_tool_call=None,
        scenario_check=None,
    )
    assert row.validators() == (SCEN,)
    encoded = parse_prompt_row({"messages": [{"role": "user", "content": "q"}], "tools": json.dumps([WEATHER_TOOL]),
                                "expected_tool_call": "true", "check_type": ""}, 1)
    assert encoded.tools == [WEATHER_TOOL]
    assert encoded.expected_tool_call is True
    assert encoded.check_types == () and encoded.validators() == ("tool_calls",)
    assert parse_prompt_row({"messages": [{"role": "user", "content": "q"}], "expected_tool_call": False}, 1).expected_tool_call is False
    assert parse_prompt_row({"messages": [{"role": "user", "content": "q"}], "check_type": LANG}, 1).check_types == (LANG,)


def test_prompt_row_to_request_strips_labels_and_maps_roles():
    raw = {
        "messages": [
            {"role": "_input", "content": "sys"},
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "reasoning": "thought",
             "tool_calls": [{"id": "Bash:0", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "Bash:0", "content": "ok"},
            {"role": "assistant", "content": "", "reasoning_detail": [{"text": "a"}, {"text": "b"}],
             "tool_calls": [{"id": "Bash:0", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "Bash:0", "content": "ok2"},
        ],
        "tools": [SHELL_TOOL],
        "check_type": ["tool_calls"],
        "expected_tool_call": True,
        "scenario_check": {"x": 1},
        "max_tokens": 10,
    }
    before = json.dumps(raw, sort_keys=True)
    req = prompt_row_to_request(raw, model="m")
    assert json.dumps(raw, sort_keys=True) == before
    assert set(req) == {"messages", "tools", "max_tokens", "model"}
    assert [m["role"] for m in req["messages"]] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert req["messages"][2]["reasoning_content"] == "thought" and "reasoning" not in req["messages"][2]
    assert req["messages"][4]["reasoning_content"] == "a\nb"
    assert req["messages"][2]["tool_calls"][0]["id"] == "Bash:0"
    assert req["messages"][4]["tool_calls"][0]["id"] == "Bash:1"
    assert req["messages"][5]["tool_call_id"] == "Bash:1"


def test_load_prompt_rows_numbers_physical_lines(tmp_path):
    p = tmp_path / "sample.jsonl"
    lines = [json.dumps({"messages": [{"role": "user", "content": "a"}]}), "",
             json.dumps({"messages": [{"role": "user", "content": "b"}], "expected_tool_call": False})]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = load_prompt_rows(p)
    assert [r.data_index for r in rows] == [1, 3]
    assert [r.expected_tool_call for r in rows] == [None, False]
    assert rows[1].source == f"{p}:3"


def test_malformed_prompt_lines_name_file_line_and_field(tmp_path):
    p = tmp_path / "bad.jsonl"
    ok = {"messages": [{"role": "user", "content": "a"}]}
    lines = [
        json.dumps(ok),
        "{not json",
        json.dumps({"tools": []}),
        json.dumps({**ok, "expected_tool_call": "maybe"}),
        json.dumps({**ok, "check_type": 5}),
        json.dumps({**ok, "tools": "[oops"}),
        json.dumps({**ok, "tools": [{"type": "function"}]}),
        json.dumps([1, 2]),
        json.dumps({**ok, "expected_tool_call": 1}),
    ]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as info:
        load_prompt_rows(p)
    msg = str(info.value).splitlines()
    assert msg[0].startswith(f"{p}:2: (line): not valid JSON")
    assert msg[1] == f"{p}:3: messages: required, a non-empty list of message objects"
    assert msg[2] == f"{p}:4: expected_tool_call: must be true, false or absent, not 'maybe'"
    assert msg[3] == f"{p}:5: check_type: must be a list of check names"
    assert msg[4].startswith(f"{p}:6: tools: not valid JSON in an encoded string")
    assert msg[5] == f"{p}:7: tools[0]: a tool needs 'function' with a string 'name'"
    assert msg[6] == f"{p}:8: (line): expected a JSON object, got list"
    assert msg[7] == f"{p}:9: expected_tool_call: must be true, false or absent, not 1"
    assert len(msg) == 8


# --- tool_calls validator -------------------------------------------------------------------------------


def test_tool_calls_stop_length_and_failed():
    assert tool_fields(completion("hi")) == {
        "tool_calls_finish_reason": "stop", "tool_calls_valid": None, "tool_calls_count": 0, "tool_calls_reason": None}
    assert tool_fields(completion("hi", finish="length")) == {
        "tool_calls_finish_reason": "length", "tool_calls_valid": None, "tool_calls_count": 0, "tool_calls_reason": None}
    assert tool_fields({"error": "boom"}, status="failed") == {
        "tool_calls_finish_reason": None, "tool_calls_valid": None, "tool_calls_count": 0, "tool_calls_reason": None}
    # success status but a body without choices: nothing to read
    assert tool_fields({"id": "x"})["tool_calls_finish_reason"] is None


def test_tool_call_finish_without_calls_is_invalid():
    for calls in ([], None):
        assert tool_fields(completion(None, finish="tool_calls", tool_calls=calls)) == {
            "tool_calls_finish_reason": "tool_calls", "tool_calls_valid": False, "tool_calls_count": 0,
            "tool_calls_reason": "finish_reason is tool_calls but the message has no tool calls"}


def test_tool_call_arguments_object_string_and_invalid_json():
    as_string = tool_fields(completion(None, "tool_calls", [call("weather", '{"city": "Paris"}')]))
    assert as_string == {"tool_calls_finish_reason": "tool_calls", "tool_calls_valid": True, "tool_calls_count": 1,
                         "tool_calls_reason": None}
    as_object = tool_fields(completion(None, "tool_calls", [call("weather", {"city": "Paris", "unit": "C"})]))
    assert as_object["tool_calls_valid"] is True
    bad_json = tool_fields(completion(None, "tool_calls", [call("weather", '{"city": "Paris"')]))
    assert bad_json["tool_calls_valid"] is False
    assert bad_json["tool_calls_reason"].startswith("arguments of 'weather' are not valid JSON")


def test_tool_call_undeclared_tool_and_schema_violation():
    f = tool_fields(completion(None, "tool_calls", [call("weather", '{"city": "Rome"}'), call("search", "{}")]))
    assert f == {"tool_calls_finish_reason": "tool_calls", "tool_calls_valid": False, "tool_calls_count": 2,
                 "tool_calls_reason": "undeclared tool 'search'"}
    missing = tool_fields(completion(None, "tool_calls", [call("weather", '{"unit": "C"}')]))
    assert missing["tool_calls_valid"] is False
    assert missing["tool_calls_reason"] == "arguments of 'weather' do not match its schema: 'city' is a required property"
    wrong_type = tool_fields(completion(None, "tool_calls", [call("weather", '{"city": 3}')]))
    assert wrong_type["tool_calls_reason"] == "arguments of 'weather' do not match its schema: 3 is not of type 'string'"
    no_tools = tool_fields(completion(None, "tool_calls", [call("weather", '{"city": "Rome"}')]),
                           request={"messages": [{"role": "user", "content": "x"}]})
    assert no_tools["tool_calls_reason"] == "undeclared tool 'weather'"
    empty_params = {"messages": [], "tools": [{"type": "function", "function": {"name": "ping", "parameters": {}}}]}
    f = tool_fields(completion(None, "tool_calls", [call("ping", "{}")]), request=empty_params)
    assert (f["tool_calls_valid"], f["tool_calls_reason"]) == (False, "tool 'ping' declares no parameters schema")
    malformed = tool_fields(completion(None, "tool_calls", [{"id": "1", "type": "function"}]))
    assert (malformed["tool_calls_valid"], malformed["tool_calls_reason"]) == (False, "malformed tool call: no function name")


@pytest.mark.parametrize(
    ("command", "valid"),
    [
        (["ls -la"], False),
        (["ls", "-la"], True),
        (["bash", "-c", "ls -la"], True),
        (["bash", "-lc", "cd /tmp && ls -la"], True),
        (["bash", "-l", "-c", "ls -la"], True),
        (["/bin/sh", "--login", "-c", "ls -la"], True),
        (["bash", "-c"], True),  # too short for a shell -c invocation, but nothing is merged
        (["git status", "--short"], False),
        (["python", "my script.py"], True),
        (["echo hello"], False),
        (["bash", "-x", "-c", "echo hi"], True),  # -x ends the shell -c detection; no element is merged
        (["bash", "-x", "-c", "ls -la"], False),  # ... so a script starting with "ls " is linted (as upstream)
        ([], False),
        (["ls", 3], False),
    ],
)
def test_command_lint(command, valid):
    assert is_valid_array_command(command) is valid
    f = tool_fields(completion(None, "tool_calls", [call("shell", json.dumps({"command": command}))]))
    if command == ["ls", 3]:
        assert f["tool_calls_reason"].startswith("arguments of 'shell' do not match its schema")
    elif valid:
        assert (f["tool_calls_valid"], f["tool_calls_reason"]) == (True, None)
    else:
        assert (f["tool_calls_valid"], f["tool_calls_reason"]) == (
            False, f"command of 'shell' merges a command and its arguments: {command!r}")


def test_absent_command_and_string_command_are_not_linted():
    assert tool_fields(completion(None, "tool_calls", [call("shell", '{"timeout": 5}')]))["tool_calls_valid"] is True
    string_cmd = {"type": "function", "function": {"name": "run", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}}}}
    f = tool_fields(completion(None, "tool_calls", [call("run", '{"command": "ls -la"}')]),
                    request={"messages": [], "tools": [string_cmd]})
    assert f["tool_calls_valid"] is True


# --- error-only reasoning ---------------------------------------------------------------------------------


def eor(response, status="success"):
    f = check([], response, status)
    assert f["error_only_reasoning_checked"] == 1
    return f["error_only_reasoning"]


def test_error_only_reasoning_branches():
    assert eor(completion("", reasoning="thinking")) is True
    assert eor(completion(None, reasoning_content="thinking")) is True  # eval752 also reads reasoning_content
    assert eor(completion("answer", reasoning="thinking")) is False
    assert eor(completion(None, "tool_calls", [call("weather", "{}")], reasoning="thinking")) is False
    assert eor(completion("", reasoning="")) is False
    assert eor(completion("")) is False
    assert eor({"error": "x"}, status="failed") is False
    assert eor({"choices": []}) is False


# --- language following -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "valid"), [("\u03ff", True), ("\u0400", False), ("\u04ff", False), ("\u0500", True), ("\u0451", False)]
)
def test_cyrillic_boundaries(char, valid):
    f = check([LANG], completion(f"abc{char}def"))
    assert (f["language_following_checked"], f["language_following_valid"]) == (True, valid)


def test_language_needs_success_and_content():
    for response, status in ((completion(""), "success"), (completion(None), "success"),
                             ({"error": "x"}, "failed"), (completion("Привет"), "failed")):
        f = check([LANG], response, status)
        assert (f["language_following_checked"], f["language_following_valid"]) == (False, None)
    f = check([LANG], completion("Привет", finish="length"))  # a truncated answer is still checked
    assert (f["language_following_checked"], f["language_following_valid"]) == (True, False)
    parts = completion([{"type": "text", "text": "При"}, {"type": "text", "text": "вет"}])
    assert check([LANG], parts)["language_following_valid"] is False


# --- repeated n-grams ----------------------------------------------------------------------------------------


def rep(text, **kw):
    f = check([REPEAT], completion(text), **kw)
    return f["error_repeating_checked"], f["error_repeating"], f["error_repeating_valid"]


def test_repeat_ngram_counts_without_overlap():
    assert rep("aaaaaa") == (True, False, True)  # "aaa" occurs twice without overlap
    assert rep("a" * 11) == (True, False, True)  # three times
    assert rep("a" * 12) == (True, True, False)  # four times
    assert rep("ab") == (True, False, True)  # shorter than n
    assert rep("abababx", n=2, threshold=3) == (True, True, False)
    assert rep("abababx", n=2, threshold=4) == (True, False, True)
    f = check([REPEAT], completion("x"), n=5, threshold=2)
    assert f["error_repeating_config"] == {"n": 5, "repeat_count": 2}


def test_ordinary_sentence_can_fail_repeat_check():
    # Reported, not fixed: " th" occurs 9 times in this ordinary 65-character sentence.
    sentence = "I think that the thing that they thought was the thing to do now."
    assert len(sentence) == 65 and sentence.count(" th") == 9
    assert rep(sentence) == (True, True, False)
    assert rep("The report on the state of the economy was released this morning.") == (True, False, True)


def test_repeat_needs_content():
    f = check([REPEAT], completion(""))
    assert (f["error_repeating_checked"], f["error_repeating"], f["error_repeating_valid"]) == (False, None, None)
    f = check([REPEAT], {"error": "x"}, status="failed")
    assert f["error_repeating_checked"] is False


# --- scenario check -----------------------------------------------------------------------------------------


def scen(content, request=REQUEST, status="success"):
    f = check([SCEN], completion(content), status, request)
    return f["scenario_check_checked"], f["scenario_check_valid"], f["scenario_check_detail"]


def test_scenario_check_branches():
    expected = ["city", "date", "unit"]
    assert scen("city: Paris, date: today, unit: C") == (True, True, {"expected": expected, "actual": expected})
    assert scen("city then date") == (True, True, {"expected": expected, "actual": ["city", "date"]})
    assert scen("date first, then city") == (True, False, {"expected": expected, "actual": ["date", "city"]})
    assert scen("city and unit") == (True, False, {"expected": expected, "actual": ["city", "unit"]})
    assert scen("only the city") == (True, False, {"expected": expected, "actual": ["city"]})  # one name
    assert scen("nothing here") == (True, False, {"expected": expected, "actual": []})
    assert scen("<think>unit date city</think>\ncity, date, unit") == (True, True, {"expected": expected, "actual": expected})
    assert scen("<think>city date</think>") == (True, False, {"expected": expected, "actual": []})
    assert scen("") == (False, None, None)
    assert scen("city date", status="failed") == (False, None, None)
    assert scen("city date", request={"messages": []}) == (False, None, None)
    no_props = {"messages": [], "tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "alpha": {}, "beta": {}, "required": []}}}]}
    assert scen("alpha beta", request=no_props) == (True, True, {"expected": ["alpha", "beta"], "actual": ["alpha", "beta"]})


def test_default_and_unknown_checks():
    row = parse_prompt_row({"messages": [{"role": "user", "content": "q"}], "check_type": ["nope", LANG]}, 1)
    assert row.validators() == (LANG,)
    f = check(row.validators(), completion("hello"))
    assert "tool_calls_finish_reason" not in f and f["language_following_valid"] is True


# --- scoring, summaries ------------------------------------------------------------------------------------


def prompts():
    base = {"messages": [{"role": "user", "content": "q"}], "tools": [WEATHER_TOOL, SHELL_TOOL]}
    raws = [
        {**base, "expected_tool_call": True},  # 1 TP valid
        {**base, "expected_tool_call": True},  # 2 TP invalid
        {**base, "expected_tool_call": True},  # 3 FN
        {**base, "expected_tool_call": False},  # 4 FP
        {**base, "expected_tool_call": False},  # 5 TN
        {**base, "expected_tool_call": False},  # 6 length -> others
        {**base},  # 7 unlabelled tool call
        {"messages": [{"role": "user", "content": "q"}], "check_type": [LANG]},  # 8 language
        {**base, "check_type": [SCEN], "expected_tool_call": False},  # 9 scenario, labelled, no tool validator
        {**base, "expected_tool_call": True},  # 10 failed
    ]
    return [parse_prompt_row(r, i + 1) for i, r in enumerate(raws)]


def responses():
    return [
        completion(None, "tool_calls", [call("weather", '{"city": "A"}'), call("weather", '{"city": "B"}')]),
        completion(None, "tool_calls", [call("nope", "{}")]),
        completion("no call"),
        completion(None, "tool_calls", [call("weather", '{"city": "A"}')]),
        completion("", reasoning="only thoughts"),
        completion("truncated", finish="length"),
        completion(None, "tool_calls", [call("weather", '{"city": "A"}')]),
        Response(text="Привет", finish_reason="stop"),
        completion("city then date then unit"),
        Response(error="HTTP 500", attempts=3),
    ]


def test_score_rows_and_loop_summary_exact():
    rows = score_rows(prompts(), responses(), model="vendor-m")
    assert [r["data_index"] for r in rows] == list(range(1, 11))
    assert rows[0]["request"]["model"] == "vendor-m" and rows[0]["finish_reason"] == "tool_calls"
    assert rows[9]["status"] == "failed" and rows[9]["response"] == {"error": "HTTP 500"} and rows[9]["attempts"] == 3
    assert rows[7]["language_following_valid"] is False and "tool_calls_finish_reason" not in rows[7]
    s = loop_summary(rows, model="vendor-m")
    assert list(s.items()) == [
        ("model", "vendor-m"),
        ("success_count", 9),
        ("failure_count", 1),
        ("all_count", 12),
        ("language_following_checked_count", 1),
        ("language_following_valid_count", 0),
        ("language_following_invalid_count", 1),
        ("scenario_check_checked_count", 1),
        ("scenario_check_valid_count", 1),
        ("scenario_check_invalid_count", 0),
        ("scenario_check_pass_rate", 1.0),
        ("tool_calls_finish_tool_calls", 2),
        ("tool_calls_finish_stop", 1),
        ("stop_finish_tool_calls", 1),
        ("stop_finish_stop", 1),
        ("tool_calls_finish_others", 1),
        ("tool_calls_finish_others_detail", {"length": 1}),
        ("expected_tool_call_total_count", 8),
        ("tool_calls_schema_validation_error_count", 1),
        ("tool_calls_successful_count", 1),
        ("tool_calls_total_count", 5),
        ("tool_calls_count_distribution", {"2": 1, "1": 1}),
        ("error_only_reasoning_checked_count", 10),
        ("error_only_reasoning_count", 1),
        ("error_only_reasoning_rate", 0.1),
        ("success_rate", 0.75),
        ("tool_calls_match_rate", 0.375),
    ]
    from eval752.verifier import summary_metrics

    m = summary_metrics(s)
    assert m["tool_calls_match_rate"] == {"value": 0.375, "num": 8}
    assert m["schema_accuracy"] == {"value": 0.5, "num": 2}
    assert m["query_success_rate"] == {"value": 0.75, "num": 12}
    assert m["repeat_ngram_pass_rate"] == {"value": None, "num": 0}


def test_summary_blocks_only_for_validators_used_and_match_fallback():
    rows = score_rows([parse_prompt_row({"messages": [{"role": "user", "content": "q"}]}, 1)], [completion("ok")])
    s = loop_summary(rows)
    assert "language_following_checked_count" not in s and "scenario_check_checked_count" not in s
    assert s["expected_tool_call_total_count"] == 0
    assert s["tool_calls_match_rate"] == 0.0  # no labels: upstream falls back to success_count, 0 matched / 1
    rows = score_rows([parse_prompt_row({"messages": [{"role": "user", "content": "q"}], "check_type": [REPEAT]}, 1)],
                      [completion("a" * 12)])
    s = loop_summary(rows)
    assert "tool_calls_match_rate" not in s
    assert (s["error_repeating_checked_count"], s["error_repeating_valid_count"], s["error_repeating_invalid_count"],
            s["error_repeating_config"]) == (1, 0, 1, {"n": 3, "repeat_count": 4})
    assert loop_summary([])["success_rate"] == 0.0


def test_response_converter():
    r = Response(text="", reasoning="r", tool_calls=(ToolCall("c1", "weather", '{"city":"X"}'),),
                 finish_reason="tool_calls", prompt_tokens=3, completion_tokens=4)
    status, body = response_to_chat_completion(r)
    assert status == "success"
    assert body["choices"][0] == {"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "", "reasoning": "r",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"X"}'}}]}}
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 4}
    assert response_to_chat_completion(Response(error="timeout")) == ("failed", {"error": "timeout"})


def test_batch_report_shape():
    s = {"model": "m", "success_count": 1}
    rep = build_batch_report(s, provider="P", test_file="t.jsonl", output_file="o", summary_file="s",
                             completed_at="c", generated_at="g")
    assert list(rep) == ["test_file", "total_providers", "successful_providers", "failed_providers",
                         "provider_results", "generated_at"]
    assert list(rep["provider_results"][0]) == ["provider", "status", "summary", "output_file", "summary_file",
                                                "completed_at"]


# --- rescoring recorded results ----------------------------------------------------------------------------


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_rescore_results_with_and_without_prompts(tmp_path):
    request = {"messages": [{"role": "user", "content": "q"}], "tools": [WEATHER_TOOL], "model": "rec-model"}
    recorded = [
        {"data_index": 2, "request": request, "response": completion("Привет"), "status": "success",
         "finish_reason": "stop", "language_following_checked": True, "language_following_valid": True},  # stale
        {"data_index": 1, "request": request,
         "response": completion(None, "tool_calls", [call("weather", '{"city": 1}')]), "status": "success",
         "expected_tool_call": True, "tool_calls_finish_reason": "tool_calls", "tool_calls_valid": True,
         "tool_calls_count": 1},
        {"data_index": 3, "finish_reason": "stop", "tool_calls_finish_reason": "stop", "status": "success",
         "expected_tool_call": False},  # trimmed
    ]
    res = tmp_path / "m_results.jsonl"
    _write_jsonl(res, recorded)
    rows, summary = rescore_results(res)
    assert [r["data_index"] for r in rows] == [1, 2, 3]
    assert rows[0]["tool_calls_valid"] is False and rows[0]["tool_calls_reason"].endswith("1 is not of type 'string'")
    assert rows[1]["language_following_valid"] is False and "tool_calls_finish_reason" not in rows[1]
    assert rows[2] == recorded[2]
    assert summary["model"] == "rec-model"
    assert (summary["tool_calls_finish_tool_calls"], summary["tool_calls_successful_count"],
            summary["stop_finish_stop"], summary["expected_tool_call_total_count"]) == (1, 0, 1, 2)
    assert summary["language_following_invalid_count"] == 1

    prompts_file = tmp_path / "sample.jsonl"
    _write_jsonl(prompts_file, [
        {"messages": [{"role": "user", "content": "q"}], "tools": [WEATHER_TOOL], "expected_tool_call": True},
        {"messages": [{"role": "user", "content": "q"}], "check_type": [LANG, REPEAT]},
        {"messages": [{"role": "user", "content": "q"}], "expected_tool_call": False},
    ])
    rows, summary = rescore_results(res, prompts_file, n=2, threshold=2, model="x")
    assert rows[1]["error_repeating_checked"] is True and rows[1]["error_repeating_config"] == {"n": 2, "repeat_count": 2}
    assert summary["model"] == "x" and summary["error_repeating_checked_count"] == 1


def test_rescore_rejects_bad_results(tmp_path):
    res = tmp_path / "r.jsonl"
    res.write_text('{"data_index": 1}\n{"data_index": 1}\n{"x": 1}\n{"data_index": 4, "status": "ok"}\n', encoding="utf-8")
    with pytest.raises(InputFormatError) as info:
        rescore_results(res)
    lines = str(info.value).splitlines()
    assert lines == [
        f"{res}:2: data_index: 1 already appeared on line 1",
        f"{res}:3: data_index: required, an integer (the prompt file's line number)",
        f"{res}:4: status: must be 'success' or 'failed', not 'ok'",
    ]
    good = tmp_path / "g.jsonl"
    _write_jsonl(good, [{"data_index": 5, "response": completion("x")}])
    prompts_file = tmp_path / "p.jsonl"
    _write_jsonl(prompts_file, [{"messages": [{"role": "user", "content": "q"}]}])
    with pytest.raises(InputFormatError, match="data_index: 1 rows have no line"):
        rescore_results(good, prompts_file)


# --- trigger similarity ------------------------------------------------------------------------------------


def test_trigger_similarity_pairs_by_data_index():
    tc, st = completion(None, "tool_calls", [call("weather", "{}")]), completion("x")
    official = [
        {"data_index": 1, "response": tc}, {"data_index": 2, "response": tc}, {"data_index": 3, "response": st},
        {"data_index": 4, "response": st}, {"data_index": 5, "finish_reason": "tool_calls"},  # trimmed row
        {"data_index": 6, "response": tc},  # missing from the model
    ]
    model = [  # shuffled; positions would pair wrongly
        {"data_index": 4, "response": st}, {"data_index": 3, "response": tc}, {"data_index": 2, "response": st},
        {"data_index": 1, "response": tc}, {"data_index": 5, "tool_calls_finish_reason": "tool_calls"},
        {"data_index": 9, "response": tc},  # extra
    ]
    sim = trigger_similarity(official, model, official_distribution={"1": 2}, model_distribution={"1": 2})
    assert sim == {
        "f1": 2 * (2 / 3) * (2 / 3) / (4 / 3), "precision": 2 / 3, "recall": 2 / 3,
        "tp": 2, "fp": 1, "fn": 1, "tn": 1, "samples_used": 5,
        "missing_data_indexes": [6], "extra_data_indexes": [9], "tool_calls_count_cosine": 1.0,
    }
    none = trigger_similarity([{"data_index": 1, "response": st}], [{"data_index": 1, "response": st}])
    assert (none["f1"], none["precision"], none["recall"], none["tn"]) == (0.0, 0.0, 0.0, 1)


def test_count_distribution_cosine():
    assert count_distribution_cosine({"1": 3, "2": 1}, {"2": 2, "1": 6}) == pytest.approx(1.0, abs=1e-15)
    assert count_distribution_cosine({"1": 1}, {"2": 1}) == 0.0
    assert count_distribution_cosine({}, {"1": 1}) == 0.0
    assert count_distribution_cosine({"1": 1, "2": 1}, {"1": 1}) == pytest.approx(2 ** -0.5, abs=1e-15)


# --- loops, report, verdicts --------------------------------------------------------------------------------


def summary_of(tp, tn, labelled, successful, lang=(0, 0), scen=(0, 0), success=100, all_count=100):
    s = {"model": "m", "success_count": success, "failure_count": all_count - success, "all_count": all_count,
         "tool_calls_finish_tool_calls": tp, "stop_finish_stop": tn, "expected_tool_call_total_count": labelled,
         "tool_calls_successful_count": successful, "error_only_reasoning_checked_count": success,
         "error_only_reasoning_count": 0}
    if lang[0]:
        s.update(language_following_checked_count=lang[0], language_following_valid_count=lang[1])
    if scen[0]:
        s.update(scenario_check_checked_count=scen[0], scenario_check_valid_count=scen[1])
    return s


def test_build_metrics_report_shape_and_optional_metrics():
    loops = [summary_of(84, 15, 100, 84, lang=(2, 1), scen=(1, 1)), summary_of(80, 15, 100, 78)]
    sims = [{"f1": 0.9, "precision": 1.0, "recall": 0.9}, None]
    rep = build_metrics_report(loops, files=["a.json", "b.json"], similarities=sims)
    assert list(rep) == ["summary", "results"]
    assert rep["summary"]["total_files"] == 2
    assert list(rep["summary"]["average_metrics"]) == [
        "1. Query-Success-Rate", "2. ToolCalls-Match-Rate", "3. ToolCalls-Trigger-Similarity",
        "4. ToolCalls-Schema-Accuracy", "5. Error-Only-Reasoning-Rate", "6. Language-Following-Success-Rate",
        "7. Scenario-Check-Pass-Rate"]
    avg = rep["summary"]["average_metrics"]
    assert avg["3. ToolCalls-Trigger-Similarity"] == 0.9 and avg["7. Scenario-Check-Pass-Rate"] == 1.0
    assert avg["6. Language-Following-Success-Rate"] == 0.25  # upstream counts an unchecked loop as 0
    second = rep["results"][1]
    assert list(second) == ["file", "model", "metrics"]
    assert second["metrics"] == {"1. Query-Success-Rate": 1.0, "2. ToolCalls-Match-Rate": 0.95,
                                 "4. ToolCalls-Schema-Accuracy": 0.975, "5. Error-Only-Reasoning-Rate": 0.0,
                                 "6. Language-Following-Success-Rate": 0}
    assert rep["results"][0]["toolcalls_trigger_similarity"] == sims[0]
    assert build_metrics_report(loops, expected_total=99)["results"][0]["metrics"]["2. ToolCalls-Match-Rate"] == 1.0


def test_compensated_sum_matches_python312_sum():
    vals = [0.99, 0.99, 0.98, 0.99, 0.95, 0.98, 0.98, 0.99, 0.99, 0.99]
    assert compensated_sum(vals) / 10 == 0.983
    assert compensated_sum([0, 0, 1.5, 2]) == 3.5 and compensated_sum([0, 0]) == 0


def test_aggregate_loops_spread_and_verdicts():
    loops = [summary_of(84, 15, 100, 84, lang=(2, 1), scen=(1, 1)), summary_of(82, 15, 100, 80, lang=(2, 2))]
    agg = aggregate_loops(loops)
    match = agg["metrics"]["tool_calls_match_rate"]
    assert match == {"value": 0.98, "num": 200, "loops": [0.99, 0.97], "loop_num": [100, 100], "min": 0.97,
                     "max": 0.99, "stdev": pytest.approx(0.0141421356, abs=1e-9), "threshold": "0.98 +- 0.01",
                     "verdict": "pass"}
    scen = agg["metrics"]["scenario_check_pass_rate"]
    assert (scen["value"], scen["num"], scen["loops"], scen["stdev"], scen["verdict"]) == (1.0, 1, [1.0, None], 0.0, "pass")
    assert agg["metrics"]["language_following_success_rate"]["value"] == 0.75
    assert agg["metrics"]["repeat_ngram_pass_rate"] == {"value": None, "num": 0, "loops": [None, None],
                                                       "loop_num": [0, 0], "min": None, "max": None, "stdev": None}
    assert agg["metrics"]["schema_accuracy"]["verdict"] == "pass"  # (1 + 80/82) / 2 = 0.9878
    assert agg["verdict"] == "pass"
    # 0.97 is inside 0.98 +- 0.01 (float rounding allowed for), 0.969 is not
    assert aggregate_loops([summary_of(82, 15, 100, 82)])["metrics"]["tool_calls_match_rate"]["verdict"] == "pass"
    low = aggregate_loops([summary_of(81, 15, 99, 81)])  # 96/99 = 0.9697
    assert low["metrics"]["tool_calls_match_rate"]["verdict"] == "fail" and low["verdict"] == "fail"
    strict = aggregate_loops(loops, thresholds={"language_following_success_rate": Threshold("at_least", 0.8)})
    assert strict["metrics"]["language_following_success_rate"]["verdict"] == "fail"
    sims = [{"f1": 0.99, "precision": 1.0, "recall": 0.98, "samples_used": 100, "tool_calls_count_cosine": 0.9}, None]
    with_sim = aggregate_loops(loops, similarities=sims)
    assert with_sim["metrics"]["trigger_f1"]["value"] == 0.99 and with_sim["metrics"]["trigger_f1"]["verdict"] == "pass"
    assert with_sim["metrics"]["tool_calls_count_cosine"]["loops"] == [0.9, None]


# --- kernels vs pure Python ------------------------------------------------------------------------------


def _generated_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = ["a", "b", " ", "th", "\u03ff", "\u0400", "\u04ff", "\u0500", "é", "😀", "abc", "\u0451"]
    out = ["", "aaaaaa", "a" * 11, "a" * 12, "\u0400", "\u04ff", "\u03ff\u0500"]
    for _ in range(count):
        out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))
    return out


def test_python_scans_match_definitions():
    texts = _generated_texts(1, 300)
    expected_cyr = [any(0x400 <= ord(c) <= 0x4FF for c in t) for t in texts]
    expected_rep = [any(t.count(t[i:i + 3]) >= 4 for i in range(len(t) - 2)) for t in texts]
    assert textscan.has_cyrillic(texts, backend="python").tolist() == expected_cyr
    assert textscan.ngram_repeats(texts, 3, 4, backend="python").tolist() == expected_rep
    with pytest.raises(ValueError):
        textscan.ngram_repeats(texts, 0, 4, backend="python")
    with pytest.raises(ValueError):
        textscan.resolve_backend("gpu")


def _kernels_available() -> bool:
    try:
        return textscan.resolve_backend("auto") == "kernels"
    except Exception:  # noqa: BLE001 - a broken kernels package counts as absent here
        return False


@pytest.mark.skipif(not _kernels_available(), reason="eval752.kernels does not export has_cyrillic/ngram_repeats yet")
def test_kernel_and_python_paths_give_identical_rows():
    texts = _generated_texts(7, 400)
    hand = ["I think that the thing that they thought was the thing to do now.", "Привет", "abc\u03ff", ""]
    rows = []
    for i, text in enumerate(hand + texts):
        status = "failed" if i % 17 == 5 else "success"
        resp = completion(text, finish="length" if i % 5 == 0 else "stop") if status == "success" else {"error": "x"}
        rows.append(RowToCheck(REQUEST, resp, status, (LANG, REPEAT, SCEN) if i % 3 else ("tool_calls", LANG, REPEAT)))
    for n, threshold in ((3, 4), (2, 3), (1, 2), (4, 2)):
        py = validate_rows(rows, n=n, threshold=threshold, backend="python")
        kn = validate_rows(rows, n=n, threshold=threshold, backend="kernels")
        assert py == kn
    assert np.array_equal(textscan.has_cyrillic(texts, backend="kernels"), textscan.has_cyrillic(texts, backend="python"))
