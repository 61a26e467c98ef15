"""Async orchestration: send every (item, sample) once, score it, append its row. Knows nothing of Hydra.

A fixed pool of workers (the provider's concurrency) pulls work from one iterator, so memory does not
grow with the dataset. Each finished unit is written at once; Ctrl-C cancels the workers and leaves the
file with every row that completed.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable

from .checkers.base import Checker
from .types import Item, Request, Response, ResultRow, Verdict, response_to_json, verdict_to_json


async def drain(work: Iterable[Any], handle: Callable[[Any], Awaitable[None]], concurrency: int) -> None:
    """Run ``handle`` over ``work`` with ``concurrency`` workers pulling from one iterator (memory stays flat
    however long ``work`` is). On cancellation (Ctrl-C) every worker is cancelled and awaited."""
    it = iter(work)

    async def worker() -> None:
        for unit in it:
            await handle(unit)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


@dataclass
class RunStats:
    sent: int = 0
    ok: int = 0
    failed: int = 0
    cached: int = 0
    checker_errors: int = 0
    seconds: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Unit:
    item: Item
    sample: int


class Runner:
    def __init__(self, provider: Any, *, checker_for: Callable[[Item], tuple[str, Checker]],
                 request_for: Callable[[Item, int], Request], write: Callable[[dict[str, Any]], None],
                 concurrency: int, progress: bool = True, total: int = 0, done: int = 0) -> None:
        self.provider = provider
        self.checker_for = checker_for
        self.request_for = request_for
        self.write = write
        self.concurrency = concurrency
        self.progress = progress
        self.total = total
        self.done = done
        self.stats = RunStats()

    async def run(self, units: Iterable[Unit]) -> RunStats:
        from tqdm import tqdm

        bar = tqdm(total=self.total, initial=self.done, unit="req", disable=not self.progress,
                   dynamic_ncols=True, mininterval=0.25, leave=True)
        started = time.perf_counter()

        def tick() -> None:
            bar.update(1)
            if bar.n % 16 == 0 or bar.n == self.total:
                elapsed = max(time.perf_counter() - started, 1e-9)
                bar.set_postfix(errors=self.stats.failed, rps=f"{self.stats.sent / elapsed:.1f}", refresh=False)

        async def handle(unit: Unit) -> None:
            self.write(await self.one(unit))
            tick()

        try:
            await drain(units, handle, self.concurrency)
        finally:
            bar.close()
            self.stats.seconds = time.perf_counter() - started
        return self.stats

    async def one(self, unit: Unit) -> dict[str, Any]:
        item = unit.item
        request = self.request_for(item, unit.sample)
        checker_name, checker = self.checker_for(item)
        response: Response = await self.provider.complete(request)
        self.stats.sent += 1
        if response.cached:
            self.stats.cached += 1
        verdict: Verdict | None = None
        if response.ok:
            self.stats.ok += 1
            try:
                verdict = await checker.acheck(item, response)
            except Exception as e:  # a checker bug must not lose the response
                self.stats.checker_errors += 1
                verdict = Verdict(score=0.0, passed=False, reason=f"checker {checker_name} failed: {e!r}"[:300],
                                  answered=False, details={"checker_error": True})
        else:
            self.stats.failed += 1
            kind = (response.error or "error").split(":")[0]
            self.stats.errors[kind] = self.stats.errors.get(kind, 0) + 1
        row = ResultRow(
            item_id=item.id,
            sample=unit.sample,
            section=item.section,
            type=item.type,
            checker=checker_name,
            request={"messages": _redact_images(request.messages), "params": dict(request.params)},
            response=response_to_json(response),
            verdict=verdict_to_json(verdict) if verdict is not None else None,
            status="ok" if response.ok else "error",
        )
        return row.to_json()


def _redact_images(messages: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """Rows keep the prompt text but not base64 image data (the dataset holds the images)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [
                {"type": "image_url", "image_url": {"url": "<image omitted>"}} if p.get("type") == "image_url" else p
                for p in content
            ]
            m = {**m, "content": content}
        out.append(dict(m))
    return out
