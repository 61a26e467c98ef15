"""Retry policy, rate limiting and completion parsing: the provider's small parts."""
from __future__ import annotations

import asyncio
import random

import pytest

from eval752.providers.completion import MalformedCompletion, assemble_stream, parse_completion
from eval752.providers.retry import CallError, RetryPolicy, parse_retry_after
from eval752.providers.provider import RateLimiter
from eval752.types import ToolCall


def test_retry_after_is_honoured_and_capped():
    policy = RetryPolicy(max_retries=3, backoff_base=0.5, backoff_max=10.0)
    rng = random.Random(0)
    assert policy.delay(1, CallError("slow down", status=429, retry_after=2.5), rng) == 2.5
    assert policy.delay(1, CallError("slow down", status=429, retry_after=99), rng) == 10.0
    for attempt, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (6, 10.0)):
        d = policy.delay(attempt, CallError("boom", status=503), rng)
        assert ceiling / 2 <= d <= ceiling


def test_which_errors_are_retried():
    policy = RetryPolicy(max_retries=2)
    for status in (400, 401, 403, 404, 422):
        assert not policy.should_retry(1, CallError("no", status=status))
    for status in (408, 429, 500, 502, 503, 504, None):
        assert policy.should_retry(1, CallError("again", status=status))
    assert policy.should_retry(2, CallError("again", status=500))
    assert not policy.should_retry(3, CallError("again", status=500))


def test_parse_retry_after():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert parse_retry_after(None) is None and parse_retry_after("-1") is None


def test_rate_limiter_books_one_slot_per_interval():
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(round(seconds, 9))

    limiter = RateLimiter(rpm=600, clock=lambda: 100.0, sleep=fake_sleep)  # one start every 0.1 s

    async def go():
        await asyncio.gather(*(limiter.wait() for _ in range(4)))

    asyncio.run(go())
    assert limiter.interval == pytest.approx(0.1)
    assert slept == [0.1, 0.2, 0.3]  # the first starts at once, the others at their booked slots
    assert RateLimiter(None).interval == 0.0


def test_parse_completion_fields():
    body = {
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "reasoning_content": "thinking",
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "get", "arguments": {"city": "Paris"}}}]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7},
    }
    f = parse_completion(body)
    assert f["text"] == "" and f["reasoning"] == "thinking" and f["finish_reason"] == "tool_calls"
    assert f["tool_calls"] == (ToolCall(id="c1", name="get", arguments='{"city": "Paris"}'),)
    assert (f["prompt_tokens"], f["completion_tokens"]) == (12, 7)
    with pytest.raises(MalformedCompletion, match="no choices"):
        parse_completion({"choices": []})


def test_assemble_stream_folds_deltas():
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "hm"}}]},
        {"choices": [{"index": 0, "delta": {"content": "Hel"}}]},
        {"choices": [{"index": 0, "delta": {"content": "lo", "tool_calls": [
            {"index": 0, "id": "c9", "function": {"name": "f", "arguments": '{"a":'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]},
                      "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
    ]
    f = parse_completion(assemble_stream(chunks))
    assert f["text"] == "Hello" and f["reasoning"] == "hm" and f["finish_reason"] == "tool_calls"
    assert f["tool_calls"] == (ToolCall(id="c9", name="f", arguments='{"a":1}'),)
    assert f["completion_tokens"] == 4
    with pytest.raises(MalformedCompletion):
        assemble_stream([])
