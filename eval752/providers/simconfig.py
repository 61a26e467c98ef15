"""From the ``provider.sim`` config section to the simulated vendor's settings."""
from __future__ import annotations

from ..config import SimVendorConfig
from .transports import bare_model_name


def sim_settings(cfg: SimVendorConfig, *, model: str):
    from .sim.settings import LatencySpec, SimSettings

    return SimSettings(
        seed=cfg.seed,
        model=bare_model_name(model),
        accuracy={k: float(v) for k, v in cfg.accuracy.items()},
        temperature_penalty=cfg.temperature_penalty,
        latency=LatencySpec(kind=cfg.latency_kind, mean_ms=cfg.latency_ms, spread_ms=cfg.latency_spread_ms),
        reasoning=cfg.reasoning,
        behaviours=list(cfg.behaviours),
    )
