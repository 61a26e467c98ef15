"""The simulated vendor, tested over real HTTP on 127.0.0.1: content, determinism, streaming, usage,
reasoning, tool calls, faults and retries, and the ``eval752-sim`` console entry."""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import httpx
import jsonschema
import openai
import pytest

from eval752.errors import ConfigError
from eval752.providers.sim import (AnswerKey, Behaviour, LatencySpec, SimServer, SimSettings, draw, profile,
                                   register, start_in_thread)
from eval752.providers.sim.tools import value_for_schema
from eval752.types import Item

ROOT = Path(__file__).resolve().parents[1]
TYPES = ("mcq_single", "mcq_multi", "freeform", "code", "judge_pairwise")
ITEMS = [
    Item("cap", "mcq_single", "Which city is the capital of France?",
         choices=("Berlin", "Paris", "Rome", "Madrid"), answer="Paris"),
    Item("primes", "mcq_multi", "Which of these numbers are prime?", choices=("2", "4", "5", "9"), answer=("2", "5")),
    Item("sum", "freeform", "What is 40 + 2?", answer="42"),
    Item("river", "freeform", "Name the longest river in Egypt.", answer="Nile"),
    Item("add", "code", "Write a Python function add(a, b) that returns the sum.",
         answer="def add(a, b):\n    return a + b"),
    Item("inc", "code", 'from typing import List\n\ndef inc(xs: List[int]) -> List[int]:\n    """Add one to each."""\n',
         answer="    return [x + 1 for x in xs]\n"),
    Item("pair", "judge_pairwise", "Compare response A and response B. Reply [[A]] if A is better, [[B]] if B is.",
         answer="B"),
    Item("weather", "freeform", "What will the weather be in Paris tomorrow?", answer="sunny",
         meta={"tool": "get_forecast"}),
]
KEY = AnswerKey.from_items(ITEMS)
WORKING = ("Let me work through this step by step.",
           "Working: I consider what the question asks and compute the result.",
           "First I restate the problem, then I solve it.")
WEATHER_TOOLS = [
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "get_forecast", "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "minLength": 2}, "days": {"type": "integer", "minimum": 1,
                                                                             "maximum": 7},
                       "unit": {"enum": ["celsius", "fahrenheit"]}, "hourly": {"type": "boolean"},
                       "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                       "where": {"type": "object", "properties": {"lat": {"type": "number"}},
                                 "required": ["lat"]},
                       "note": {"type": "string"}},
        "required": ["city", "days", "unit", "hourly", "tags", "where"]}}},
]


HTTP = httpx.Client(timeout=10.0)  # one client: a fresh one per call costs ~30 ms of TLS set-up


def u(seed, item, req_seed, purpose):
    """The documented determinism formula, written out independently of the implementation."""
    key = f"{seed}:{item}:{'-' if req_seed is None else req_seed}:{purpose}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / 16**12


def settings(acc: float, **kw) -> SimSettings:
    return SimSettings(accuracy={t: acc for t in TYPES + ("default",)}, **kw)


@pytest.fixture(scope="module")
def perfect():
    with start_in_thread(settings(1.0), KEY) as h:
        yield h.base_url


@pytest.fixture(scope="module")
def hopeless():
    with start_in_thread(settings(0.0), KEY) as h:
        yield h.base_url


def chat(url, text=None, *, item=None, messages=None, timeout=10.0, **params):
    body = {"model": "sim-1", "messages": messages or [{"role": "user", "content": text}], **params}
    headers = {"X-Eval752-Item": item} if item else {}
    return HTTP.post(url + "/chat/completions", json=body, headers=headers, timeout=timeout)


def content(url, text, **kw):
    r = chat(url, text, **kw)
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]["message"]["content"]


def run(coro):
    return asyncio.run(coro)


# -- content at accuracy 1.0 and 0.0 ---------------------------------------------------------------
def test_mcq_single_right_and_wrong_letter_in_documented_style(perfect, hopeless):
    styles = lambda letter, text: [letter, f"Answer: {letter}", f"The answer is ({letter}).", f"{letter}) {text}"]
    prompt = ("Which city is the capital of France?\n\nA) Berlin\nB) Paris\nC) Rome\nD) Madrid\n\n"
              "Answer with the letter.")
    for seed in range(6):
        style = int(u(0, "cap", seed, "style") * 4)
        assert content(perfect, prompt, seed=seed) == styles("B", "Paris")[style]
        wrong = [0, 2, 3][int(u(0, "cap", seed, "wrong") * 3)]
        letter, text = "ABCD"[wrong], ITEMS[0].choices[wrong]
        assert content(hopeless, prompt, seed=seed) == styles(letter, text)[style]


def test_mcq_multi_correct_set_and_wrong_set(perfect, hopeless):
    assert content(perfect, "Which of these numbers are prime? A) 2 B) 4", seed=1) == "Answer: A, C"
    flip = int(u(0, "primes", 1, "wrong") * 4)
    wrong = sorted({0, 2} ^ {flip}) or [(flip + 1) % 4]
    expected = "Answer: " + ", ".join("ABCD"[i] for i in wrong)
    assert content(hopeless, "Which of these numbers are prime?", seed=1) == expected
    assert wrong != [0, 2]


def test_freeform_reference_with_working_line_and_numeric_perturbation(perfect, hopeless):
    w = WORKING[int(u(0, "sum", 5, "working") * 3)]
    assert content(perfect, "What is 40 + 2?", seed=5) == f"{w}\nThe answer is 42"
    step = 1 + int(u(0, "sum", 5, "wrong") * 9)
    assert content(hopeless, "What is 40 + 2?", seed=5) == f"{w}\nThe answer is {42 + step}"
    good = content(perfect, "Name the longest river in Egypt.", seed=5).splitlines()
    bad = content(hopeless, "Name the longest river in Egypt.", seed=5).splitlines()
    assert good[1] == "The answer is Nile"
    said = bad[1].removeprefix("The answer is ")
    assert len(said) == 4 and said.lower() != "nile" and sum(a != b for a, b in zip(said, "Nile")) == 1


def test_code_fenced_reference_or_stub_returning_none(perfect, hopeless):
    assert content(perfect, "Write a Python function add(a, b) that returns the sum.") == (
        "Here is the implementation:\n```python\ndef add(a, b):\n    return a + b\n```")
    assert content(hopeless, "Write a Python function add(a, b) that returns the sum.") == (
        "Here is the implementation:\n```python\ndef add(a, b):\n    return None\n```")
    # A body-only reference (HumanEval style) completes the prompt; the stub keeps its imports.
    good = content(perfect, "", item="inc")
    program = good.split("```python\n")[1].split("```")[0]
    scope: dict = {}
    exec(program, scope)
    assert scope["inc"]([1, 2]) == [2, 3]
    bad = content(hopeless, "", item="inc").split("```python\n")[1].split("```")[0]
    scope = {}
    exec(bad, scope)
    assert scope["inc"]([1, 2]) is None


def test_judge_pairwise_item_and_generic_judge_prompts(perfect, hopeless):
    assert content(perfect, "", item="pair").endswith("[[B]]")
    assert content(hopeless, "", item="pair").endswith("[[A]]")  # only A and B are offered
    tie_prompt = "Judge the two answers. Output [[A]], [[B]] or [[C]] for a tie. Answer A: x. Answer B: y."
    seen = {content(perfect, tie_prompt, seed=s)[-5:] for s in range(30)}
    assert seen == {"[[A]]", "[[B]]", "[[C]]"}
    for s in range(5):
        v = "ABC"[int(u(0, "p:" + hashlib.sha256(tie_prompt.encode()).hexdigest()[:16], s, "verdict") * 3)]
        assert content(perfect, tie_prompt, seed=s) == f"After comparing both responses, my verdict is: [[{v}]]"
    rating = "Rate the answer from 1 to 10 and reply with [[rating]], e.g. [[5]]."
    got = {content(perfect, rating, seed=s) for s in range(40)}
    assert {int(g.removeprefix("Rating: [[").removesuffix("]]")) for g in got} <= set(range(1, 11))
    assert len(got) > 5


def test_unknown_prompt_gets_deterministic_generic_answer(perfect):
    a = content(perfect, "Tell me something nobody asked.", seed=1)
    assert a == content(perfect, "Tell me something nobody asked.", seed=1)
    assert a == "I do not have enough information to answer that with confidence."
    letter = content(perfect, "Pick one.\nA) red\nB) blue\nC) green", seed=2)
    assert letter in ("Answer: A", "Answer: B", "Answer: C")


def test_lookup_header_exact_then_longest_substring(tmp_path):
    key = AnswerKey([{"id": "short", "type": "freeform", "text": "2+2", "answer": "4"},
                     {"id": "long", "type": "freeform", "text": "What is 2+2 in base ten?", "answer": "4"},
                     {"id": "other", "type": "freeform", "text": "Name a colour please", "answer": "red"}])
    assert key.lookup("other", "What is 2+2 in base ten?")["id"] == "other"
    assert key.lookup("missing", "  Name a colour please \n")["id"] == "other"
    assert key.lookup(None, "Q: What is 2+2 in base ten? Think.")["id"] == "long"
    assert key.lookup(None, "compute 2+2 now")["id"] == "short"
    assert key.lookup(None, "nothing here") is None
    key.save(tmp_path / "key.jsonl")
    again = AnswerKey.load(tmp_path / "key.jsonl")
    assert again.entries() == key.entries()
    native = tmp_path / "ds.jsonl"
    native.write_text("\n".join(json.dumps(i.to_json()) for i in ITEMS) + "\n")
    loaded = AnswerKey.load(native)
    assert loaded.get("cap")["choices"] == list(ITEMS[0].choices) and loaded.get("weather")["tool"] == "get_forecast"
    assert loaded.lookup(None, "Which of these numbers are prime? A) 2")["answer"] == ["2", "5"]


# -- determinism, accuracy rates, temperature ------------------------------------------------------
def test_same_request_same_body_apart_from_id_and_created(perfect):
    def strip(body):
        return {k: v for k, v in body.items() if k not in ("id", "created")}

    req = dict(seed=7, temperature=0.3)
    bodies = [chat(perfect, "What is 40 + 2?", **req).json() for _ in range(2)]
    with start_in_thread(settings(1.0), KEY) as other:
        bodies.append(chat(other.base_url, "What is 40 + 2?", **req).json())
    assert strip(bodies[0]) == strip(bodies[1]) == strip(bodies[2])
    assert bodies[0]["id"] != bodies[1]["id"]


def test_accuracy_rate_and_temperature_penalty_follow_formula():
    s = SimSettings(seed=3, accuracy={"freeform": 0.6}, temperature_penalty=0.4)
    with start_in_thread(s, KEY) as h:
        for temp in (0.0, 0.5):
            p = 0.6 - 0.4 * temp
            for req_seed in range(40):
                said = content(h.base_url, "What is 40 + 2?", seed=req_seed, temperature=temp)
                assert said.endswith("is 42") == (u(3, "sum", req_seed, "correct") < p)
    hits = sum(u(3, "sum", i, "correct") < 0.6 for i in range(400))
    assert 200 < hits < 280
    assert draw(3, "sum", 1, "correct") == u(3, "sum", 1, "correct")
    with start_in_thread(settings(1.0, temperature_penalty=1.0), KEY) as h:
        assert content(h.base_url, "What is 40 + 2?", temperature=0).endswith("is 42")
        assert not content(h.base_url, "What is 40 + 2?", temperature=1.0).endswith("is 42")
        assert not content(h.base_url, "What is 40 + 2?").endswith("is 42")  # absent = 1.0


# -- usage, streaming, reasoning, n, max_tokens ----------------------------------------------------
def test_usage_counts_words():
    with start_in_thread(settings(1.0), KEY) as h:
        body = chat(h.base_url, messages=[{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "What is 40 + 2?"}], seed=5).json()
    said = body["choices"][0]["message"]["content"]
    assert body["usage"] == {"prompt_tokens": (2 + 1) + (5 + 1), "completion_tokens": len(said.split()),
                             "total_tokens": 9 + len(said.split())}
    assert body["object"] == "chat.completion" and body["model"] == "sim-1"
    assert body["choices"][0]["finish_reason"] == "stop"


def test_reasoning_content_only_when_enabled(perfect):
    with start_in_thread(settings(1.0, reasoning=True), KEY) as h:
        body = chat(h.base_url, "What is 40 + 2?", seed=5).json()
    msg = body["choices"][0]["message"]
    assert msg["reasoning_content"].startswith("The user asks: What is 40 + 2?")
    assert msg["reasoning_content"].endswith("So I will reply: The answer is 42")
    r = len(msg["reasoning_content"].split())
    assert body["usage"]["completion_tokens_details"] == {"reasoning_tokens": r}
    assert body["usage"]["completion_tokens"] == r + len(msg["content"].split())
    assert "reasoning_content" not in chat(perfect, "What is 40 + 2?").json()["choices"][0]["message"]


async def _collect_stream(url, **params):
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    text, reasoning, calls, finish, usage = "", "", {}, None, None
    stream = await client.chat.completions.create(model="sim-1", stream=True, **params)
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.model_dump(exclude_none=True)
        for ch in chunk.choices:
            d = ch.delta
            text += d.content or ""
            reasoning += (d.model_extra or {}).get("reasoning_content") or ""
            for tc in d.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["arguments"] += (tc.function.arguments or "") if tc.function else ""
            finish = ch.finish_reason or finish
    await client.close()
    return text, reasoning, calls, finish, usage


def test_streaming_reassembles_to_the_non_streamed_reply():
    with start_in_thread(settings(1.0, reasoning=True), KEY) as h:
        for prompt in (ITEMS[4].text, ITEMS[0].text):
            whole = chat(h.base_url, prompt, seed=2).json()
            msg = whole["choices"][0]["message"]
            text, reasoning, _, finish, usage = run(_collect_stream(
                h.base_url, messages=[{"role": "user", "content": prompt}], seed=2,
                stream_options={"include_usage": True}))
            assert (text, reasoning, finish) == (msg["content"], msg["reasoning_content"], "stop")
            assert usage == whole["usage"]
        tools = run(_collect_stream(h.base_url, messages=[{"role": "user", "content": "weather?"}], tools=WEATHER_TOOLS,
                                    tool_choice={"type": "function", "function": {"name": "get_forecast"}}))
        assert tools[3] == "tool_calls" and tools[2][0]["name"] == "get_forecast"
        jsonschema.validate(json.loads(tools[2][0]["arguments"]), WEATHER_TOOLS[1]["function"]["parameters"])
        raw = HTTP.post(h.base_url + "/chat/completions", json={"model": "m", "stream": True, "messages": [
            {"role": "user", "content": "hi"}]}).text
    events = [e for e in raw.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    assert all("usage" not in json.loads(e[6:]) for e in events[:-1])


def test_n_choices_and_max_tokens_truncation(perfect):
    body = chat(perfect, "Name the longest river in Egypt.", n=3, seed=1).json()
    assert [c["index"] for c in body["choices"]] == [0, 1, 2]
    assert all(c["message"]["content"].endswith("The answer is Nile") for c in body["choices"])
    cut = chat(perfect, "Name the longest river in Egypt.", seed=1, max_tokens=3).json()["choices"][0]
    assert cut["finish_reason"] == "length" and len(cut["message"]["content"].split()) == 3


# -- tool calls ------------------------------------------------------------------------------------
def test_tool_calls_with_schema_valid_arguments(perfect):
    async def go():
        client = openai.AsyncOpenAI(base_url=perfect, api_key="x", max_retries=0)
        try:
            r = await client.chat.completions.create(
                model="sim-1", messages=[{"role": "user", "content": "What will the weather be in Paris tomorrow?"}],
                tools=WEATHER_TOOLS, seed=4)
            first = await client.chat.completions.create(
                model="sim-1", messages=[{"role": "user", "content": "unknown prompt"}], tools=WEATHER_TOOLS)
            none = await client.chat.completions.create(
                model="sim-1", messages=[{"role": "user", "content": "What is 40 + 2?"}], tools=WEATHER_TOOLS,
                tool_choice="none")
            return r, first, none
        finally:
            await client.close()

    r, first, none = run(go())
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "get_forecast" and call.id.startswith("call_")
    args = json.loads(call.function.arguments)
    jsonschema.validate(args, WEATHER_TOOLS[1]["function"]["parameters"])
    assert set(args) == {"city", "days", "unit", "hourly", "tags", "where"} and len(args["tags"]) == 2
    assert first.choices[0].message.tool_calls[0].function.name == "get_time"
    assert json.loads(first.choices[0].message.tool_calls[0].function.arguments) == {}
    assert none.choices[0].message.tool_calls is None and none.choices[0].message.content.endswith("42")
    # With the tool's result in hand the model answers in words.
    after = chat(perfect, messages=[
        {"role": "user", "content": "What will the weather be in Paris tomorrow?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "get_forecast", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], tools=WEATHER_TOOLS).json()
    assert after["choices"][0]["finish_reason"] == "stop"
    assert after["choices"][0]["message"]["content"].endswith("The answer is sunny")


def test_value_for_schema_covers_types():
    schema = {"type": "object", "required": ["a", "b", "c", "d"], "properties": {
        "a": {"type": ["string", "null"], "maxLength": 3}, "b": {"anyOf": [{"type": "null"}, {"type": "number"}]},
        "c": {"const": 7}, "d": {"type": "string", "format": "date"}}}
    v = value_for_schema(schema, 0.5)
    jsonschema.validate(v, schema)
    assert v["c"] == 7 and v["d"] == "2024-01-15" and len(v["a"]) == 3


# -- faults ----------------------------------------------------------------------------------------
async def _raw(url, *, stream=False, text="hello", timeout=5.0):
    """(status, headers, body text) or the exception raised while reading the reply."""
    body = {"model": "sim-1", "messages": [{"role": "user", "content": text}], "stream": stream}
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as s:
            async with s.post(url + "/chat/completions", json=body) as r:
                return r.status, dict(r.headers), await r.text()
    except (aiohttp.ClientError, asyncio.TimeoutError) as e:
        return e


def _fault(name, **opts):
    return start_in_thread(settings(1.0, behaviours=[{"name": name, "attempts": 1, **opts}]), KEY)


@pytest.mark.parametrize("name,status,retry_after,error_type", [
    ("rate_limit", 429, "2", "requests"),
    ("rate_limit_no_retry_after", 429, None, "requests"),
    ("server_error", 500, None, "server_error"),
    ("service_unavailable", 503, None, "server_error"),
    ("context_length", 400, None, "invalid_request_error"),
])
def test_error_faults_have_openai_shape_then_succeed(name, status, retry_after, error_type):
    opts = {"retry_after_s": 2} if name == "rate_limit" else {}
    with _fault(name, **opts) as h:
        for stream in (False, True):
            text = f"What is 40 + 2? {stream}"
            got, headers, body = run(_raw(h.base_url, stream=stream, text=text))
            assert got == status and headers.get("Retry-After") == retry_after
            assert json.loads(body)["error"]["type"] == error_type
            if name == "context_length":
                assert "maximum context length" in json.loads(body)["error"]["message"]
                assert json.loads(body)["error"]["code"] == "context_length_exceeded"
            assert run(_raw(h.base_url, stream=stream, text=text))[0] == 200


def test_bad_gateway_is_html_and_malformed_json_does_not_parse():
    with _fault("bad_gateway") as h:
        status, headers, body = run(_raw(h.base_url))
        assert status == 502 and headers["Content-Type"].startswith("text/html") and "502 Bad Gateway" in body
    with _fault("malformed_json") as h:
        status, headers, body = run(_raw(h.base_url))
        assert status == 200 and headers["Content-Type"].startswith("application/json")
        with pytest.raises(json.JSONDecodeError):
            json.loads(body)
        status, _, body = run(_raw(h.base_url, stream=True))
        with pytest.raises(json.JSONDecodeError):
            json.loads(body.split("\n\n")[0][6:])


def test_connection_reset_and_stream_cut_break_the_connection():
    for name in ("connection_reset", "stream_cut"):
        with _fault(name) as h:
            for stream in (False, True):
                err = run(_raw(h.base_url, stream=stream, text=f"hi {stream}"))
                assert isinstance(err, aiohttp.ClientError), (name, stream, err)
                if name == "stream_cut":
                    assert isinstance(err, aiohttp.ClientPayloadError)
                else:
                    assert isinstance(err, (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError))
                assert run(_raw(h.base_url, stream=stream, text=f"hi {stream}"))[0] == 200


def test_empty_choices_hang_and_slow():
    with _fault("empty_choices") as h:
        status, _, body = run(_raw(h.base_url))
        assert status == 200 and json.loads(body)["choices"] == []
    with _fault("hang", hang_s=30) as h:
        t = time.perf_counter()
        assert isinstance(run(_raw(h.base_url, timeout=0.3)), asyncio.TimeoutError)
        assert run(_raw(h.base_url))[0] == 200
    assert time.perf_counter() - t < 5  # stopping the server does not wait for the hung handler
    with _fault("slow", slow_s=0.3) as h:
        t = time.perf_counter()
        assert run(_raw(h.base_url))[0] == 200
        assert time.perf_counter() - t >= 0.3


def test_openai_client_retries_through_faults():
    async def go(url):
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=3)
        try:
            r = await client.chat.completions.create(
                model="sim-1", messages=[{"role": "user", "content": "What is 40 + 2?"}])
            return r.choices[0].message.content
        finally:
            await client.close()

    with _fault("rate_limit", retry_after_s=0) as h:
        assert run(go(h.base_url)).endswith("42")
        assert h.server.requests == 2
    async def fails(url):
        async with openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=2) as client:
            with pytest.raises(openai.InternalServerError):
                await client.chat.completions.create(model="sim-1", messages=[{"role": "user", "content": "x"}])

    with start_in_thread(settings(1.0, behaviours=[{"name": "server_error", "rate": 1.0}]), KEY) as h:
        run(fails(h.base_url))  # no attempts limit: every attempt fails
        assert h.server.requests == 3


def test_fault_mix_is_deterministic_and_follows_rates():
    spec = {"name": "faults", "rates": {"server_error": 0.3, "rate_limit": 0.2}, "retry_after_s": 1}

    def statuses():
        with start_in_thread(settings(1.0, seed=9, behaviours=[spec]), KEY) as h:
            out = [chat(h.base_url, f"question {i}").status_code for i in range(150)]
            out += [chat(h.base_url, "question 0").status_code for _ in range(5)]  # later attempts
            return out

    first, second = statuses(), statuses()
    assert first == second
    assert 25 < first[:150].count(500) < 65 and 15 < first[:150].count(429) < 50
    assert set(first) == {200, 429, 500}
    with pytest.raises(ValueError, match="more than 1"):
        SimServer(settings(1.0, behaviours=[{"name": "faults", "rates": {"hang": 0.7, "slow": 0.6}}]))
    with pytest.raises(ValueError, match="did you mean 'hang'"):
        SimServer(settings(1.0, behaviours=[{"name": "faults", "rates": {"hnag": 0.1}}]))


def test_context_length_limit_is_a_real_limit():
    s = settings(1.0, behaviours=[{"name": "context_length", "max_context_tokens": 5}])
    with start_in_thread(s, KEY) as h:
        assert chat(h.base_url, "short one").status_code == 200
        for _ in range(2):
            assert chat(h.base_url, "one two three four five six").status_code == 400


# -- behaviours, settings, latency -----------------------------------------------------------------
@register
class ShoutBehaviour(Behaviour):
    name = "test_shout"

    def __init__(self, settings=None, suffix="!"):
        super().__init__(settings)
        self.suffix = suffix

    def after(self, ctx, draft):
        draft.content = (draft.content or "").upper() + self.suffix
        return draft


def test_custom_behaviour_and_unknown_name(perfect):
    with start_in_thread(settings(1.0, behaviours=[{"name": "test_shout", "suffix": "?!"}]), KEY) as h:
        assert content(h.base_url, "What is 40 + 2?", seed=5).endswith("THE ANSWER IS 42?!")
    with pytest.raises(ConfigError, match="did you mean 'latency'"):
        SimServer(settings(1.0, behaviours=["latncy"]))


def test_latency_spec_and_latency_behaviour():
    assert LatencySpec("fixed", 50).sample_ms(0.9) == 50
    uniform = LatencySpec("uniform", 100, 20)
    assert uniform.sample_ms(0.0) == 80 and uniform.sample_ms(0.5) == 100
    logn = LatencySpec("lognormal", 200, 100)
    samples = [logn.sample_ms((i + 0.5) / 4000) for i in range(4000)]
    mean = sum(samples) / len(samples)
    assert abs(mean - 200) < 5 and abs((sum((x - mean) ** 2 for x in samples) / len(samples)) ** 0.5 - 100) < 8
    with start_in_thread(settings(1.0, latency=LatencySpec("fixed", 150)), KEY) as h:
        t = time.perf_counter()
        assert chat(h.base_url, "hi").status_code == 200
        assert time.perf_counter() - t >= 0.15


def test_settings_from_flat_config_and_profiles():
    s = SimSettings.from_mapping({"seed": 4, "accuracy": {"code": 0.9}, "latency_kind": "uniform", "latency_ms": 10,
                                  "latency_spread_ms": 5, "reasoning": True, "behaviours": []})
    assert s.latency == LatencySpec("uniform", 10, 5) and s.accuracy["code"] == 0.9 and s.accuracy["default"] == 0.5
    with pytest.raises(ValueError, match="unknown sim settings"):
        SimSettings.from_mapping({"sed": 1})
    assert profile("perfect", seed=2).accuracy["mcq_multi"] == 1.0
    with pytest.raises(ValueError, match="did you mean 'flaky'"):
        profile("flakey")
    with pytest.raises(ValueError, match="must be in"):
        SimServer(settings(1.5))


def test_models_health_and_bad_requests(perfect):
    assert HTTP.get(perfect + "/models").json()["data"][0]["id"] == "sim-1"
    assert HTTP.get(perfect.removesuffix("/v1") + "/health").json()["status"] == "ok"
    alias = HTTP.post(perfect.removesuffix("/v1") + "/chat/completions",
                       json={"model": "x", "messages": [{"role": "user", "content": "What is 40 + 2?"}]})
    assert alias.status_code == 200 and alias.json()["model"] == "x"
    bad = HTTP.post(perfect + "/chat/completions", content=b"{nope")
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    assert HTTP.post(perfect + "/chat/completions", json={"model": "x", "messages": []}).status_code == 400


# -- the console entry -----------------------------------------------------------------------------
def test_console_entry_prints_url_and_serves(tmp_path):
    ds = tmp_path / "ds.jsonl"
    ds.write_text("\n".join(json.dumps(i.to_json()) for i in ITEMS) + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "eval752.providers.sim.server", "--answer-key", str(ds),
                             "--accuracy", "1", "--accuracy", "code=0", "--seed", "3", "--model", "cli-model"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert content(url, "What is 40 + 2?", seed=5).endswith("The answer is 42")
        assert "return None" in content(url, "Write a Python function add(a, b) that returns the sum.")
        assert HTTP.get(url + "/models").json()["data"][0]["id"] == "cli-model"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "RuntimeWarning" not in err
