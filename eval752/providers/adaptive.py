"""Adaptive concurrency: how many requests may be in flight, learnt from the vendor's 429s (AIMD).

The runner keeps ``provider.concurrency`` workers busy; this limiter decides how many of them may have a
request on the wire at once. It starts at the ceiling (``provider.concurrency``) and

* halves the limit (never below 1) when a request is answered 429 — *multiplicative decrease*. A burst
  of 429s from requests that were all sent before the limit was last lowered counts once: only a 429 on
  a request admitted after the previous decrease lowers it again, so the limit keeps halving while the
  429s are sustained and does not collapse to 1 on one burst;
* raises the limit by one after every ``limit`` successes in a row of a window — *additive increase* —
  back up to the ceiling.

Other failures (5xx, timeouts, bad bodies) leave the limit alone: they say nothing about the rate.
It holds no clock and no randomness, so a sequence of events always gives the same limits.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

OK = "ok"
THROTTLED = "throttled"
OTHER = "other"


@dataclass(frozen=True)
class Slot:
    """One admitted request: the decrease epoch it was admitted in."""

    epoch: int


class AdaptiveLimiter:
    def __init__(self, ceiling: int, *, floor: int = 1, enabled: bool = True) -> None:
        if ceiling < 1 or floor < 1 or floor > ceiling:
            raise ValueError(f"adaptive limiter needs 1 <= floor <= ceiling, got floor={floor} ceiling={ceiling}")
        self.ceiling = ceiling
        self.floor = floor
        self.enabled = enabled
        self.limit = ceiling
        self.in_flight = 0
        self.epoch = 0  # bumped at every decrease
        self.decreases = 0
        self.increases = 0
        self.lowest = ceiling
        self._successes = 0
        self._changed = asyncio.Event()  # set whenever a slot is released; waiters then look again

    def _has_room(self) -> bool:
        return self.in_flight < (self.limit if self.enabled else self.ceiling)

    async def acquire(self) -> Slot:
        while not self._has_room():
            self._changed.clear()
            await self._changed.wait()
        self.in_flight += 1
        return Slot(self.epoch)

    def release(self, slot: Slot, outcome: str) -> None:
        """Give the slot back, reporting how its request went: ``OK``, ``THROTTLED`` (429) or ``OTHER``."""
        self.in_flight -= 1
        if self.enabled:
            if outcome == THROTTLED:
                self.on_throttled(slot)
            elif outcome == OK:
                self.on_success()
        self._changed.set()

    def on_throttled(self, slot: Slot) -> None:
        self._successes = 0
        if slot.epoch != self.epoch:
            return  # admitted before the last decrease: that decrease already answered this burst
        new = max(self.floor, self.limit // 2)
        self.epoch += 1
        if new < self.limit:
            self.limit = new
            self.decreases += 1
            self.lowest = min(self.lowest, new)

    def on_success(self) -> None:
        if self.limit >= self.ceiling:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self.increases += 1
