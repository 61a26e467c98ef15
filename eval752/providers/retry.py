"""Retry policy: which failures are worth another attempt, and how long to wait before it."""
from __future__ import annotations

import random
from dataclasses import dataclass

# The vendor rejected the request itself: sending it again cannot help.
FATAL_STATUSES = frozenset({400, 401, 403, 404, 405, 413, 422})


class CallError(Exception):
    """One failed attempt. ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None,
                 transient: bool | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        if transient is None:
            transient = status is None or status not in FATAL_STATUSES
        self.transient = transient

    def describe(self) -> str:
        return f"HTTP {self.status}: {self}" if self.status else str(self)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds; HTTP dates are read as 'unknown')."""
    if not value:
        return None
    try:
        secs = float(value.strip())
    except ValueError:
        return None
    return secs if secs >= 0 else None


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0

    def delay(self, attempt: int, error: CallError, rng: random.Random) -> float:
        """Wait before attempt ``attempt + 1`` (attempt counts from 1): Retry-After if given, else
        exponential backoff with full jitter, capped at ``backoff_max``."""
        if error.retry_after is not None:
            return min(error.retry_after, self.backoff_max)
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        return rng.uniform(0.5 * ceiling, ceiling)

    def should_retry(self, attempt: int, error: CallError) -> bool:
        return error.transient and attempt <= self.max_retries
