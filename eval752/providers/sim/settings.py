"""Settings of the simulated vendor, its named profiles, and the one draw every decision is made from.

Determinism
-----------
Every random-looking decision of the simulator is ``draw(seed, item, req_seed, purpose)``::

    u = int(sha256(f"{seed}:{item}:{req_seed}:{purpose}".encode()).hexdigest()[:12], 16) / 16**12

a number in [0, 1). ``seed`` is ``SimSettings.seed``; ``item`` is the item id (the ``X-Eval752-Item``
header, else the matched answer-key entry's id, else ``"p:" + sha256(last user message)[:16]``);
``req_seed`` is the request's ``seed`` parameter (``-`` when absent); ``purpose`` names the decision
(``correct``, ``style``, ``wrong``, ``latency``, ...; choice ``i > 0`` of an ``n > 1`` request appends
``#i``). A reply is correct iff ``draw(..., "correct") < p_eff`` where
``p_eff = clip(accuracy[type] - temperature_penalty * temperature, 0, 1)`` and ``temperature`` is the
request's (1.0 when absent, as in OpenAI's API). Arrival order and timing never enter, except for
faults, which also hash the attempt number (see ``faults.py``).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, fields, replace
from statistics import NormalDist
from typing import Any, Mapping

DEFAULT_ACCURACY: dict[str, float] = {
    "mcq_single": 0.8,
    "mcq_multi": 0.7,
    "freeform": 0.7,
    "code": 0.7,
    "judge_pairwise": 0.5,
    "default": 0.5,
}

_SCALE = float(16**12)
_NORMAL = NormalDist()


def draw(seed: int, item: str, req_seed: Any, purpose: str) -> float:
    """The simulator's only source of randomness: a pure function of its four arguments, in [0, 1)."""
    key = f"{seed}:{item}:{'-' if req_seed is None else req_seed}:{purpose}"
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16) / _SCALE


@dataclass
class LatencySpec:
    """How long the vendor waits before answering.

    ``fixed``: always ``mean_ms``. ``uniform``: ``mean_ms ± spread_ms`` (``spread_ms`` is the half-width).
    ``lognormal``: a log-normal with mean ``mean_ms`` and standard deviation ``spread_ms`` (moment-matched:
    ``sigma² = ln(1 + (spread/mean)²)``, ``mu = ln(mean) - sigma²/2``), so it has the long right tail of
    real vendors. Negative values are clipped to 0. The value is drawn with purpose ``latency``.
    """

    kind: str = "fixed"
    mean_ms: float = 0.0
    spread_ms: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "uniform", "lognormal"):
            raise ValueError(f"latency kind must be fixed, uniform or lognormal, not {self.kind!r}")
        if self.mean_ms < 0 or self.spread_ms < 0:
            raise ValueError("latency mean_ms and spread_ms must be >= 0")

    @property
    def active(self) -> bool:
        return self.mean_ms > 0 or (self.kind == "uniform" and self.spread_ms > 0)

    def sample_ms(self, u: float) -> float:
        """The latency for the uniform draw ``u`` in [0, 1)."""
        if self.kind == "uniform":
            value = self.mean_ms + (2.0 * u - 1.0) * self.spread_ms
        elif self.kind == "lognormal" and self.mean_ms > 0 and self.spread_ms > 0:
            sigma2 = math.log1p((self.spread_ms / self.mean_ms) ** 2)
            mu = math.log(self.mean_ms) - sigma2 / 2.0
            z = _NORMAL.inv_cdf(min(max(u, 1e-12), 1.0 - 1e-12))
            value = math.exp(mu + math.sqrt(sigma2) * z)
        else:
            value = self.mean_ms
        return max(0.0, value)


@dataclass
class SimSettings:
    """Everything that shapes the simulated vendor's answers.

    ``behaviours`` lists extra behaviours (faults, vendor defects) by name, each a string or a mapping
    ``{"name": ..., <options>}`` (or ``{"name": ..., "options": {...}}``); see ``behaviours.py``.
    """

    seed: int = 0
    model: str = "sim-1"
    accuracy: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_ACCURACY))
    temperature_penalty: float = 0.0
    latency: LatencySpec = field(default_factory=LatencySpec)
    reasoning: bool = False
    behaviours: list[Any] = field(default_factory=list)

    def validate(self) -> None:
        """Raise ``ValueError`` for an accuracy outside [0, 1] or a negative temperature penalty."""
        for kind, p in self.accuracy.items():
            if not 0.0 <= float(p) <= 1.0:
                raise ValueError(f"sim accuracy[{kind!r}] must be in [0, 1], got {p}")
        if self.temperature_penalty < 0:
            raise ValueError(f"sim temperature_penalty must be >= 0, got {self.temperature_penalty}")

    def accuracy_for(self, item_type: str | None) -> float:
        acc = self.accuracy
        if item_type in acc:
            return float(acc[item_type])
        return float(acc.get("default", DEFAULT_ACCURACY["default"]))

    def effective_accuracy(self, item_type: str | None, temperature: float) -> float:
        p = self.accuracy_for(item_type) - self.temperature_penalty * temperature
        return min(1.0, max(0.0, p))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "SimSettings":
        """Build settings from a plain mapping: nested ``latency`` or eval752's flat config keys
        (``latency_kind``, ``latency_ms``, ``latency_spread_ms``). Unknown keys are an error."""
        data = dict(data)
        lat = data.pop("latency", None)
        flat = {k: data.pop(k) for k in ("latency_kind", "latency_ms", "latency_spread_ms") if k in data}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown sim settings {unknown}; valid: {sorted(known | {'latency'})}")
        if isinstance(lat, LatencySpec):
            latency = lat
        else:
            spec = dict(lat or {})
            if "latency_kind" in flat:
                spec["kind"] = flat["latency_kind"]
            if "latency_ms" in flat:
                spec["mean_ms"] = float(flat["latency_ms"])
            if "latency_spread_ms" in flat:
                spec["spread_ms"] = float(flat["latency_spread_ms"])
            latency = LatencySpec(**spec)
        settings = cls(latency=latency, **data)
        merged = dict(DEFAULT_ACCURACY)
        merged.update({str(k): float(v) for k, v in (settings.accuracy or {}).items()})
        settings.accuracy = merged
        settings.behaviours = list(settings.behaviours or [])
        return settings


def _perfect() -> SimSettings:
    return SimSettings(accuracy={k: 1.0 for k in DEFAULT_ACCURACY})


def _flaky() -> SimSettings:
    rates = {"rate_limit": 0.05, "server_error": 0.02, "service_unavailable": 0.02, "connection_reset": 0.01,
             "malformed_json": 0.01, "empty_choices": 0.01}
    return SimSettings(behaviours=[{"name": "faults", "rates": rates}])


PROFILES: dict[str, Any] = {
    "default": SimSettings,
    "perfect": _perfect,
    "hopeless": lambda: SimSettings(accuracy={k: 0.0 for k in DEFAULT_ACCURACY}),
    "reasoning": lambda: SimSettings(reasoning=True),
    "slow": lambda: SimSettings(latency=LatencySpec("lognormal", 800.0, 400.0)),
    "realistic": lambda: SimSettings(latency=LatencySpec("lognormal", 300.0, 150.0), temperature_penalty=0.1),
    "flaky": _flaky,
}


def profile(name: str, **overrides: Any) -> SimSettings:
    """A named preset (``default``, ``perfect``, ``hopeless``, ``reasoning``, ``slow``, ``realistic``,
    ``flaky``) with fields replaced by ``overrides``."""
    if name not in PROFILES:
        from ...registry import unknown_name_message

        raise ValueError(unknown_name_message("sim profile", name, sorted(PROFILES)))
    return replace(PROFILES[name](), **overrides)
