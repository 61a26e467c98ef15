"""The OpenAI wire format: completion bodies, SSE chunks, usage and error bodies."""
from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from .context import Draft, RequestContext, count_tokens, message_text

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
STREAM_PIECES = 4  # content is streamed in at most this many chunks (small per-request work)


def usage_for(ctx: RequestContext, drafts: list[Draft]) -> dict[str, Any]:
    """Prompt: one token per word of every message's text plus one per message. Completion: words of
    content and reasoning, and of each tool call's name and arguments (reasoning also reported apart)."""
    prompt = sum(count_tokens(message_text(m.get("content"))) + 1 for m in ctx.messages if isinstance(m, dict))
    reasoning = sum(count_tokens(d.reasoning) for d in drafts)
    completion = reasoning
    for d in drafts:
        completion += count_tokens(d.content)
        for call in d.tool_calls:
            fn = call["function"]
            completion += 1 + count_tokens(fn["arguments"])
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


def message_of(draft: Draft) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": draft.content}
    if draft.reasoning is not None:
        msg["reasoning_content"] = draft.reasoning
    if draft.tool_calls:
        msg["tool_calls"] = draft.tool_calls
    return msg


def completion_body(ctx: RequestContext, drafts: list[Draft], cid: str, created: int) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": ctx.model,
        "system_fingerprint": f"fp_sim_{ctx.settings.seed}",
        "choices": [{"index": d.index, "message": message_of(d), "logprobs": None,
                     "finish_reason": d.finish_reason} for d in drafts],
        "usage": usage_for(ctx, drafts),
    }


def _pieces(text: str, parts: int = STREAM_PIECES) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]


def sse_events(ctx: RequestContext, drafts: list[Draft], cid: str, created: int) -> list[bytes]:
    """The reply as ``data: {...}`` events, ending with the usage chunk (when asked) and ``[DONE]``."""
    head = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": ctx.model,
            "system_fingerprint": f"fp_sim_{ctx.settings.seed}"}
    with_usage = ctx.include_usage
    events: list[bytes] = []

    def emit(index: int, delta: dict[str, Any], finish: str | None = None) -> None:
        chunk = dict(head)
        chunk["choices"] = [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]
        if with_usage:
            chunk["usage"] = None
        events.append(b"data: " + _dumps(chunk).encode("utf-8") + b"\n\n")

    for d in drafts:
        emit(d.index, {"role": "assistant", "content": ""})
        for piece in _pieces(d.reasoning or ""):
            emit(d.index, {"reasoning_content": piece})
        for piece in _pieces(d.content or ""):
            emit(d.index, {"content": piece})
        for k, call in enumerate(d.tool_calls):
            fn = call["function"]
            emit(d.index, {"tool_calls": [{"index": k, "id": call["id"], "type": "function",
                                           "function": {"name": fn["name"], "arguments": ""}}]})
            for piece in _pieces(fn["arguments"], 2):
                emit(d.index, {"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
        emit(d.index, {}, d.finish_reason)
    if with_usage:
        chunk = dict(head)
        chunk["choices"] = []
        chunk["usage"] = usage_for(ctx, drafts)
        events.append(b"data: " + _dumps(chunk).encode("utf-8") + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=_dumps(obj).encode("utf-8"), status=status, headers=headers,
                        content_type="application/json")


def error_body(message: str, type_: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def error_response(status: int, message: str, type_: str, code: str | None = None,
                   param: str | None = None, headers: dict[str, str] | None = None) -> web.Response:
    return json_response(error_body(message, type_, code, param), status=status, headers=headers)


async def write_sse(request: web.Request, events: list[bytes], cut: bool = False) -> web.StreamResponse:
    """Send ``events`` as ``text/event-stream``; with ``cut``, send half of them and drop the connection."""
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                   "Cache-Control": "no-cache"})
    await resp.prepare(request)
    if cut:
        half = max(1, (len(events) - 1) // 2)
        await resp.write(b"".join(events[:half]))
        abort_connection(request)
        return resp
    await resp.write(b"".join(events))
    await resp.write_eof()
    return resp


def abort_connection(request: web.Request) -> None:
    """Drop the TCP connection at once (with SO_LINGER 0, so the peer sees a reset)."""
    import socket
    import struct

    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()
