"""Turning a chat-completion body (a dict, whoever sent it) into eval752's ``Response`` fields.

Both transports end here: the direct HTTP client parses JSON (or assembles an SSE stream) into a dict,
litellm's ``ModelResponse`` is dumped to one. One parser, so both transports record the same things.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from ..types import ToolCall


class MalformedCompletion(Exception):
    """The vendor answered 200 with a body that is not a usable chat completion (retryable)."""


def parse_completion(body: Mapping[str, Any]) -> dict[str, Any]:
    """Fields for ``Response``: text, reasoning, tool_calls, finish_reason, prompt/completion tokens."""
    if not isinstance(body, Mapping):
        raise MalformedCompletion(f"completion is not an object: {type(body).__name__}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedCompletion("completion has no choices")
    choice = choices[0] if isinstance(choices[0], Mapping) else {}
    msg = choice.get("message") or {}
    if not isinstance(msg, Mapping):
        raise MalformedCompletion("choices[0].message is not an object")
    content = msg.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    reasoning = msg.get("reasoning_content")
    if reasoning is None:
        reasoning = msg.get("reasoning")
    calls = []
    for i, tc in enumerate(msg.get("tool_calls") or []):
        fn = (tc or {}).get("function") or {}
        args = fn.get("arguments")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False) if args is not None else ""
        calls.append(ToolCall(id=str(tc.get("id") or f"call_{i}"), name=str(fn.get("name") or ""), arguments=args))
    usage = body.get("usage") or {}
    return {
        "text": content if isinstance(content, str) else "",
        "reasoning": reasoning if isinstance(reasoning, str) and reasoning else None,
        "tool_calls": tuple(calls),
        "finish_reason": choice.get("finish_reason"),
        "prompt_tokens": _int_or_none(usage.get("prompt_tokens")),
        "completion_tokens": _int_or_none(usage.get("completion_tokens")),
    }


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def assemble_stream(chunks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Fold SSE ``chat.completion.chunk`` objects into one non-streaming completion body."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    usage = None
    seen_choice = False
    for chunk in chunks:
        if chunk.get("usage"):
            usage = chunk["usage"]
        for ch in chunk.get("choices") or []:
            seen_choice = True
            delta = ch.get("delta") or {}
            if delta.get("content"):
                content.append(delta["content"])
            r = delta.get("reasoning_content") or delta.get("reasoning")
            if r:
                reasoning.append(r)
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(tc.get("index", len(calls))), {"id": None, "name": "", "arguments": ""})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    slot["name"] += fn["name"]
                if fn.get("arguments"):
                    slot["arguments"] += fn["arguments"]
            if ch.get("finish_reason"):
                finish = ch["finish_reason"]
    if not seen_choice:
        raise MalformedCompletion("stream carried no choices")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(calls.items())
        ]
    body: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return body
