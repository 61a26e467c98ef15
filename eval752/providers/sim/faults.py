"""Faults: the ways a real vendor fails, each a behaviour that short-circuits a request in ``before``.

Faults are deterministic and retryable. Whether a fault fires is decided by

    u = draw(settings.seed, request_hash, attempt, "fault:<name>")      (one fault on its own)
    u = draw(settings.seed, request_hash, attempt, "faults")            (the ``faults`` mix)

where ``request_hash`` is sha256 of the exact request body plus the ``X-Eval752-Item`` header and
``attempt`` is how many times this server has already seen that request (0 the first time). A retry
is a new attempt, so it gets a fresh draw and can succeed. ``attempts: N`` limits a fault to the first
N attempts of each request (``rate: 1.0, attempts: 1`` fails every request once, then serves it).

Configure one fault: ``{"name": "rate_limit", "rate": 0.1, "retry_after_s": 2}``. Configure a mix, at
most one fault per request: ``{"name": "faults", "rates": {"rate_limit": 0.05, "hang": 0.01}, ...}``
with the faults' options (``retry_after_s``, ``hang_s``, ``slow_s``, ``max_context_tokens``) alongside.
"""
from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from .behaviours import Behaviour, register
from .context import RequestContext, count_tokens, message_text
from .settings import SimSettings, draw
from .wire import abort_connection, error_response, json_response, usage_for


def fault_draw(ctx: RequestContext, purpose: str) -> float:
    return draw(ctx.settings.seed, ctx.request_hash, ctx.attempt, purpose)


class Fault(Behaviour):
    """A fault that fires with probability ``rate`` on each attempt (only the first ``attempts`` ones
    when set). Subclasses implement ``respond``; returning None lets the request go on."""

    name = "fault"

    def __init__(self, settings: SimSettings | None = None, rate: float = 1.0, attempts: int | None = None):
        super().__init__(settings)
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"{self.name}: rate must be in [0, 1], got {rate}")
        self.rate = float(rate)
        self.attempts = attempts

    def fires(self, ctx: RequestContext) -> bool:
        if self.rate <= 0.0 or (self.attempts is not None and ctx.attempt >= self.attempts):
            return False
        return fault_draw(ctx, f"fault:{self.name}") < self.rate

    async def before(self, ctx: RequestContext) -> Any:
        return await self.respond(ctx) if self.fires(ctx) else None

    async def respond(self, ctx: RequestContext) -> Any:
        raise NotImplementedError


@register
class RateLimit(Fault):
    """429 with a ``Retry-After`` header (seconds)."""

    name = "rate_limit"

    def __init__(self, settings=None, rate=1.0, attempts=None, retry_after_s: float = 1) -> None:
        super().__init__(settings, rate, attempts)
        self.retry_after_s = retry_after_s

    async def respond(self, ctx):
        secs = self.retry_after_s
        text = str(int(secs)) if float(secs).is_integer() else str(secs)
        return error_response(429, f"Rate limit reached for {ctx.model} on requests per min (RPM). "
                              f"Please try again in {text}s.", "requests", "rate_limit_exceeded",
                              headers={"Retry-After": text})


@register
class RateLimitNoRetryAfter(Fault):
    """429 without any hint of when to come back."""

    name = "rate_limit_no_retry_after"

    async def respond(self, ctx):
        return error_response(429, "Too many requests; slow down.", "requests", "rate_limit_exceeded")


@register
class ServerError(Fault):
    name = "server_error"

    async def respond(self, ctx):
        return error_response(500, "The server had an error while processing your request. Sorry about that!",
                              "server_error")


@register
class BadGateway(Fault):
    """502 as a proxy in front of a vendor sends it: an HTML page, not JSON."""

    name = "bad_gateway"

    async def respond(self, ctx):
        html = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
        return web.Response(status=502, text=html, content_type="text/html")


@register
class ServiceUnavailable(Fault):
    name = "service_unavailable"

    async def respond(self, ctx):
        return error_response(503, "The engine is currently overloaded, please try again later.", "server_error",
                              "overloaded")


@register
class ConnectionReset(Fault):
    """The connection is dropped (TCP reset) before any byte of the reply."""

    name = "connection_reset"

    async def respond(self, ctx):
        abort_connection(ctx.request)
        return web.Response(status=204)  # never reaches the peer


@register
class Hang(Fault):
    """Accepts the request and says nothing for ``hang_s`` seconds (then a 504)."""

    name = "hang"

    def __init__(self, settings=None, rate=1.0, attempts=None, hang_s: float = 3600.0) -> None:
        super().__init__(settings, rate, attempts)
        self.hang_s = float(hang_s)

    async def respond(self, ctx):
        await asyncio.sleep(self.hang_s)
        return error_response(504, "Gateway timeout.", "server_error", "timeout")


@register
class Slow(Fault):
    """Waits ``slow_s`` seconds, then answers normally."""

    name = "slow"

    def __init__(self, settings=None, rate=1.0, attempts=None, slow_s: float = 2.0) -> None:
        super().__init__(settings, rate, attempts)
        self.slow_s = float(slow_s)

    async def respond(self, ctx):
        await asyncio.sleep(self.slow_s)
        return None


@register
class MalformedJson(Fault):
    """Status 200 with a body that is not valid JSON (a truncated object; for streams, a broken event)."""

    name = "malformed_json"

    async def respond(self, ctx):
        if ctx.stream:
            body = b'data: {"id": "chatcmpl-sim", "object": "chat.completion.chunk", "choices": [{\n\ndata: [DONE]\n\n'
            return web.Response(body=body, status=200, content_type="text/event-stream")
        body = b'{"id": "chatcmpl-sim", "object": "chat.completion", "choices": [{"index": 0, "message": {"role'
        return web.Response(body=body, status=200, content_type="application/json")


@register
class StreamCut(Fault):
    """The reply starts normally and the connection drops halfway (streamed or not)."""

    name = "stream_cut"

    async def respond(self, ctx):
        ctx.cut_stream = True
        return None


@register
class EmptyChoices(Fault):
    """Status 200 and a well-formed body whose ``choices`` list is empty."""

    name = "empty_choices"

    async def respond(self, ctx):
        head = {"id": "chatcmpl-sim-empty", "created": 0, "model": ctx.model, "choices": []}
        if ctx.stream:
            import json

            chunk = dict(head, object="chat.completion.chunk")
            body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
            return web.Response(body=body, status=200, content_type="text/event-stream")
        return json_response(dict(head, object="chat.completion", usage=usage_for(ctx, [])))


def prompt_tokens(ctx: RequestContext) -> int:
    return sum(count_tokens(message_text(m.get("content"))) + 1 for m in ctx.messages if isinstance(m, dict))


@register
class ContextLength(Fault):
    """400 ``context_length_exceeded``. Fires always when ``max_context_tokens`` is set and the prompt
    is longer (a real limit, not retryable), and otherwise with ``rate`` (default 1.0, or 0.0 when
    ``max_context_tokens`` is set)."""

    name = "context_length"

    def __init__(self, settings=None, rate: float | None = None, attempts=None,
                 max_context_tokens: int | None = None) -> None:
        super().__init__(settings, (0.0 if max_context_tokens else 1.0) if rate is None else rate, attempts)
        self.max_context_tokens = max_context_tokens

    def fires(self, ctx: RequestContext) -> bool:
        if self.max_context_tokens is not None and prompt_tokens(ctx) > self.max_context_tokens:
            return True
        return super().fires(ctx)

    async def respond(self, ctx):
        limit = self.max_context_tokens or 8192
        used = max(prompt_tokens(ctx), limit + 1)
        return error_response(400, f"This model's maximum context length is {limit} tokens. However, your "
                              f"messages resulted in {used} tokens. Please reduce the length of the messages.",
                              "invalid_request_error", "context_length_exceeded", "messages")


FAULT_KINDS = ("rate_limit", "rate_limit_no_retry_after", "server_error", "bad_gateway", "service_unavailable",
               "connection_reset", "hang", "malformed_json", "stream_cut", "empty_choices", "context_length",
               "slow")
_OPTION_OWNER = {"retry_after_s": "rate_limit", "hang_s": "hang", "slow_s": "slow",
                 "max_context_tokens": "context_length"}


@register
class Faults(Behaviour):
    """A mix of faults with their rates; one draw per attempt picks at most one (rates are stacked in
    the fixed order of ``FAULT_KINDS``, so their sum must be <= 1)."""

    name = "faults"

    def __init__(self, settings: SimSettings | None = None, rates: dict[str, float] | None = None,
                 attempts: int | None = None, **options: Any) -> None:
        super().__init__(settings)
        from .behaviours import BEHAVIOURS

        rates = dict(rates or {})
        for kind in rates:
            if kind not in FAULT_KINDS:
                from ...registry import unknown_name_message

                raise ValueError(unknown_name_message("fault", kind, list(FAULT_KINDS)))
        for opt in options:
            if opt not in _OPTION_OWNER:
                raise ValueError(f"faults: unknown option {opt!r}; valid: {sorted(_OPTION_OWNER)}")
        if sum(rates.values()) > 1.0 + 1e-9:
            raise ValueError(f"faults: rates sum to {sum(rates.values())}, more than 1")
        self.attempts = attempts
        limit = options.get("max_context_tokens")
        self.limit = ContextLength(settings, rate=0.0, max_context_tokens=limit) if limit else None
        self.stack: list[tuple[float, Fault]] = []
        total = 0.0
        for kind in FAULT_KINDS:
            if rates.get(kind, 0.0) > 0.0:
                total += float(rates[kind])
                opts = {k: v for k, v in options.items() if _OPTION_OWNER[k] == kind}
                self.stack.append((total, BEHAVIOURS.create(kind, settings=settings, **opts)))

    async def before(self, ctx: RequestContext) -> Any:
        if self.limit is not None and self.limit.fires(ctx):
            return await self.limit.respond(ctx)
        if not self.stack or (self.attempts is not None and ctx.attempt >= self.attempts):
            return None
        u = fault_draw(ctx, "faults")
        for upper, fault in self.stack:
            if u < upper:
                return await fault.respond(ctx)
        return None
