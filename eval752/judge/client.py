"""The judge's own model: a ``Provider`` built from ``judge.provider``, opened lazily per event loop.

Judge calls go through ``Provider.complete``, so they are cached (same response cache as the run, keyed
on the judge's identity and the judge prompt) and retried like any request. For ``judge.provider.sim``
the client starts its own simulated vendor (no answer key: it sees judge prompts only, and its judge
hook answers ``[[rating]]`` and ``[[A]]/[[B]]`` prompts deterministically from the prompt text).

Why per event loop, and closed through an async generator: checkers are built once, before any loop
runs, and the runner (and ``eval752-score``) each drive them inside their own ``asyncio.run``. An HTTP
session belongs to the loop that made it, so the client opens one set of resources per running loop,
on the first judge call. To close them without a hook in the runner, the client parks an async
generator in that loop: ``asyncio.run`` finalises open async generators (``loop.shutdown_asyncgens``)
before closing the loop, which runs the generator's ``finally`` and closes the provider, the cache and
the simulated vendor. ``aclose()`` does the same explicitly.
"""
from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any, AsyncIterator

from ..config import CacheConfig, ProviderConfig
from ..errors import ConfigError
from ..types import Request, Response, sha256_of


def judge_identity(cfg: ProviderConfig) -> str | None:
    if cfg.sim is None:
        return None
    return f"judge-sim:{cfg.model}#{sha256_of(asdict(cfg.sim))[:16]}"


class _LoopResources:
    def __init__(self) -> None:
        self.provider: Any = None
        self.cache: Any = None
        self.sim: Any = None
        self.keeper: Any = None  # the parked async generator (a strong reference: the loop keeps a weak one)

    async def close(self) -> None:
        try:
            if self.provider is not None:
                await self.provider.close()
        finally:
            if self.cache is not None:
                self.cache.close()
            if self.sim is not None:
                await asyncio.to_thread(self.sim.stop)
            self.provider = self.cache = self.sim = None


class JudgeClient:
    """Sends judge prompts to ``cfg`` (a ``ProviderConfig``); counts what it sent."""

    def __init__(self, cfg: ProviderConfig | None, cache: CacheConfig | None = None) -> None:
        if cfg is None or (not cfg.model and cfg.sim is None):
            raise ConfigError("an LLM judge needs a judge model: add judge=sim (the simulated vendor), "
                              "judge=openai, or set judge.provider.* (the same keys as provider)")
        from ..errors import Eval752Error
        from ..providers.provider import resolve_api_key

        try:
            resolve_api_key(cfg)  # a missing key fails the run up front, not every judge call
        except Eval752Error as e:
            raise ConfigError(f"judge: {e}") from None
        self.cfg = cfg
        self.cache_cfg = cache or CacheConfig()
        self._loops: dict[asyncio.AbstractEventLoop, _LoopResources] = {}
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    async def _resources(self) -> _LoopResources:
        loop = asyncio.get_running_loop()
        res = self._loops.get(loop)
        if res is not None and res.provider is not None:
            return res
        lock = self._locks.setdefault(loop, asyncio.Lock())
        async with lock:
            res = self._loops.get(loop)
            if res is None or res.provider is None:
                res = await self._open()
                self._loops[loop] = res
                res.keeper = self._keeper(loop, res)
                await res.keeper.__anext__()
        return res

    async def _keeper(self, loop: asyncio.AbstractEventLoop, res: _LoopResources) -> AsyncIterator[None]:
        try:
            yield
        finally:
            self._loops.pop(loop, None)
            self._locks.pop(loop, None)
            await res.close()

    async def _open(self) -> _LoopResources:
        from ..providers.cache import ResponseCache
        from ..providers.provider import Provider, check_reachable

        res = _LoopResources()
        api_base = self.cfg.api_base
        try:
            if self.cfg.sim is not None:
                from ..providers.sim import start_in_thread
                from ..providers.simconfig import sim_settings

                settings = sim_settings(self.cfg.sim, model=self.cfg.model)
                res.sim = await asyncio.to_thread(start_in_thread, settings, None)
                api_base = res.sim.base_url
            elif api_base:
                await asyncio.to_thread(check_reachable, api_base)
            if self.cache_cfg.enabled:
                res.cache = ResponseCache(self.cache_cfg.path)
            res.provider = Provider(self.cfg, api_base=api_base, identity=judge_identity(self.cfg),
                                    cache=res.cache, send_item_header=False)
            await res.provider.open()
        except BaseException:
            await res.close()
            raise
        return res

    async def complete(self, messages: list[dict[str, Any]], *, tag: str = "judge") -> Response:
        """One judge call; ``tag`` names it in retries' jitter (``judge:<item>``)."""
        res = await self._resources()
        provider = res.provider
        request = Request(item_id=tag, sample=0, messages=tuple(messages), params=provider.base_params())
        return await provider.complete(request)

    async def aclose(self) -> None:
        """Close this loop's resources now (``asyncio.run`` also does it when the loop ends)."""
        loop = asyncio.get_running_loop()
        res = self._loops.get(loop)
        if res is not None and res.keeper is not None:
            await res.keeper.aclose()


def call_record(response: Response) -> dict[str, Any]:
    """What a verdict keeps about one judge call."""
    return {"output": response.text, "attempts": response.attempts, "error": response.error}
