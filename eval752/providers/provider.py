"""A provider: one model behind one transport, with retries, a rate limit, a cache and cost tracking."""
from __future__ import annotations

import asyncio
import os
import random
import socket
import time
from typing import Any, Callable
from urllib.parse import urlparse

from ..config import ProviderConfig
from ..errors import ProviderError
from ..types import Request, Response, sha256_of
from .adaptive import OK, OTHER, THROTTLED, AdaptiveLimiter
from .cache import ResponseCache
from .completion import MalformedCompletion, parse_completion
from .retry import CallError, RetryPolicy
from .transports import OPENAI_COMPATIBLE_PREFIXES, HttpTransport, LiteLLMTransport, import_litellm

GENERATION_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop")


def resolve_api_key(cfg: ProviderConfig) -> str | None:
    """The key from the environment variable the config names; a clear error when it is not set."""
    if not cfg.api_key_env:
        return None
    key = os.environ.get(cfg.api_key_env)
    if not key:
        raise ProviderError(
            f"provider {cfg.name!r} needs an API key: set the environment variable {cfg.api_key_env} "
            f"(for example `export {cfg.api_key_env}=...`), or point provider.api_key_env at another variable"
        )
    return key


def choose_transport(cfg: ProviderConfig) -> str:
    if cfg.transport != "auto":
        return cfg.transport
    if cfg.sim is not None or (cfg.api_base and cfg.model.startswith(OPENAI_COMPATIBLE_PREFIXES)):
        return "http"
    return "litellm"


def check_reachable(api_base: str, timeout: float = 5.0) -> None:
    """Fail before the run when nothing listens at ``api_base`` (DNS failure, refused, unroutable)."""
    u = urlparse(api_base)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ProviderError(f"provider.api_base {api_base!r} is not an http(s) URL")
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.hostname, port), timeout=timeout):
            pass
    except OSError as e:
        raise ProviderError(f"cannot reach provider.api_base {api_base}: {e.strerror or e}") from None


def preflight(cfg: ProviderConfig) -> None:
    """Refuse a provider that cannot work before a run writes anything: a missing key variable, simulated-vendor
    behaviours it cannot build, an api_base nothing listens at."""
    resolve_api_key(cfg)
    if cfg.sim is not None:
        from ..errors import ConfigError
        from .sim.behaviours import build_pipeline
        from .simconfig import sim_settings

        try:
            build_pipeline(sim_settings(cfg.sim, model=cfg.model))
        except (ValueError, TypeError) as e:
            raise ConfigError(f"provider.sim.behaviours: {e}") from None
    elif cfg.api_base:
        check_reachable(cfg.api_base)


class RateLimiter:
    """Spaces request starts so that at most ``rpm`` begin in any minute."""

    def __init__(self, rpm: int | None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._clock = clock
        self._sleep = sleep

    async def wait(self) -> None:
        if not self.interval:
            return
        now = self._clock()  # no await between reading and booking the slot: no lock needed
        start = max(now, self._next)
        self._next = start + self.interval
        if start > now:
            await self._sleep(start - now)


class Provider:
    def __init__(self, cfg: ProviderConfig, *, api_base: str | None = None, identity: str | None = None,
                 cache: ResponseCache | None = None, send_item_header: bool = False) -> None:
        self.cfg = cfg
        self.api_base = api_base or cfg.api_base
        # What the cache keys on instead of the (possibly random-port) URL.
        self.identity = identity or f"{cfg.model}@{self.api_base or ''}"
        self.cache = cache
        self.send_item_header = send_item_header
        self.policy = RetryPolicy(cfg.max_retries, cfg.backoff_base, cfg.backoff_max)
        self.kind = choose_transport(cfg)
        self.api_key = resolve_api_key(cfg)
        self.transport: Any = None
        self._limiter: RateLimiter | None = None
        # How many requests may be on the wire at once: halved on sustained 429s, regained on successes.
        self.adaptive = AdaptiveLimiter(max(1, cfg.concurrency), enabled=getattr(cfg, "adaptive_concurrency", True))
        self.deadline: float | None = getattr(cfg, "deadline", None)
        self._cost_fn: Callable[[int | None, int | None], float | None] | None = None
        self.calls = 0

    def base_params(self) -> dict[str, Any]:
        return {k: getattr(self.cfg, k) for k in GENERATION_KEYS if getattr(self.cfg, k) is not None}

    async def open(self) -> None:
        if self.kind == "http":
            if not self.api_base:
                raise ProviderError(f"provider {self.cfg.name!r}: transport http needs provider.api_base")
            self.transport = HttpTransport(self.api_base, self.cfg.model, self.api_key, timeout=self.cfg.timeout,
                                           concurrency=self.cfg.concurrency, stream=self.cfg.stream)
        else:
            key = self.api_key
            if key is None and self.api_base and self.cfg.model.startswith(OPENAI_COMPATIBLE_PREFIXES):
                key = "no-key"  # a keyless local server; litellm's OpenAI client insists on some key
            self.transport = LiteLLMTransport(self.cfg.model, self.api_base, key, timeout=self.cfg.timeout,
                                              stream=self.cfg.stream)
        await self.transport.open()
        self._limiter = RateLimiter(self.cfg.rpm)
        if self.cfg.track_cost:
            self._cost_fn = await asyncio.to_thread(_cost_function, self.cfg.model)

    async def close(self) -> None:
        if self.transport is not None:
            await self.transport.close()

    def request_body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": list(request.messages), **request.params}
        if request.tools:
            body["tools"] = list(request.tools)
        if self.cfg.extra_body:
            if self.kind == "http":
                body.update(self.cfg.extra_body)
            else:
                body["extra_body"] = dict(self.cfg.extra_body)
        return body

    def cache_key(self, request: Request) -> str:
        return request.cache_key(self.identity, None) if self.cache is not None else ""

    async def complete(self, request: Request) -> Response:
        key = self.cache_key(request)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Response(**_response_fields(hit), attempts=0, cached=True, latency_s=0.0)
        body = self.request_body(request)
        headers = {"X-Eval752-Item": request.item_id} if self.send_item_header else {}
        rng = random.Random(f"{request.item_id}:{request.sample}")
        began = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            assert self._limiter is not None
            await self._limiter.wait()
            slot = await self.adaptive.acquire()
            outcome = OTHER
            start = time.perf_counter()
            try:
                self.calls += 1
                raw = await self._send(body, headers, began, attempt)
                fields = parse_completion(raw)
                outcome = OK
            except (CallError, MalformedCompletion) as e:
                err = e if isinstance(e, CallError) else CallError(f"malformed completion: {e}")
                outcome = THROTTLED if err.status == 429 else OTHER
                self.adaptive.release(slot, outcome)
                latency = round(time.perf_counter() - start, 6)
                if self.policy.should_retry(attempt, err):
                    wait = self.policy.delay(attempt, err, rng)
                    left = self._time_left(began)
                    if left is None or wait < left:
                        await asyncio.sleep(wait)
                        continue
                    err = self._deadline_error(attempt, err)
                return Response(error=self.redact(err.describe()), attempts=attempt, latency_s=latency)
            except BaseException:
                self.adaptive.release(slot, OTHER)
                raise
            self.adaptive.release(slot, outcome)
            latency = round(time.perf_counter() - start, 6)
            cost = self._cost_fn(fields["prompt_tokens"], fields["completion_tokens"]) if self._cost_fn else None
            if self.cache is not None:
                self.cache.put(key, {**_json_fields(fields), "cost": cost})
            return Response(**fields, latency_s=latency, cost=cost, attempts=attempt)

    def redact(self, text: str) -> str:
        """An error message with the API key masked: some vendors echo the key they were sent."""
        return text.replace(self.api_key, "***") if self.api_key else text

    def _time_left(self, began: float) -> float | None:
        """Seconds left of ``provider.deadline`` for this request (None: no deadline)."""
        if self.deadline is None:
            return None
        return self.deadline - (time.monotonic() - began)

    def _deadline_error(self, attempt: int, last: CallError | None) -> CallError:
        noun = "attempt" if attempt == 1 else "attempts"
        tail = f" (last error: {last.describe()})" if last is not None else ""
        return CallError(f"deadline of {self.deadline:g}s exceeded after {attempt} {noun}{tail}", transient=False)

    async def _send(self, body: dict[str, Any], headers: dict[str, str], began: float, attempt: int) -> Any:
        """One attempt, bounded by min(provider.timeout, what is left of provider.deadline)."""
        left = self._time_left(began)
        if left is None or left >= self.cfg.timeout:
            return await self.transport.send(body, headers)  # the transport's own timeout applies
        try:
            async with asyncio.timeout(max(left, 0.0)):
                return await self.transport.send(body, headers)
        except TimeoutError:
            raise self._deadline_error(attempt, None) from None


def run_with_provider(provider: "Provider", work: Callable[[], Any]) -> bool:
    """Open ``provider``, await ``work()``, close it, in a fresh event loop. True when Ctrl-C interrupted."""

    async def go() -> None:
        await provider.open()
        try:
            await work()
        finally:
            await provider.close()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        return True
    return False


def _json_fields(fields: dict[str, Any]) -> dict[str, Any]:
    out = dict(fields)
    out["tool_calls"] = [{"id": t.id, "name": t.name, "arguments": t.arguments} for t in fields["tool_calls"]]
    return out


def _response_fields(stored: dict[str, Any]) -> dict[str, Any]:
    from ..types import ToolCall

    out = {k: stored.get(k) for k in ("text", "reasoning", "finish_reason", "prompt_tokens",
                                       "completion_tokens", "cost")}
    out["text"] = out["text"] or ""
    out["tool_calls"] = tuple(ToolCall(**t) for t in stored.get("tool_calls") or ())
    return out


def _cost_function(model: str) -> Callable[[int | None, int | None], float | None] | None:
    """litellm's price for ``model``, or None when litellm does not know it."""
    litellm = import_litellm()

    def cost(prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        if prompt_tokens is None and completion_tokens is None:
            return None
        try:
            p, c = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens or 0,
                                          completion_tokens=completion_tokens or 0)
            return float(p) + float(c)
        except Exception:
            return None

    return cost if cost(1000, 1000) is not None else None


def provider_identity(cfg: ProviderConfig, extra: Any = None) -> str:
    """A stable name for what answers: model and endpoint, or model and simulated-vendor settings."""
    return f"{cfg.model}@{cfg.api_base or ''}#{sha256_of(extra)[:16]}" if extra is not None else \
        f"{cfg.model}@{cfg.api_base or ''}"
