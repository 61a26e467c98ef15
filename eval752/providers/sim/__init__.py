"""``sim``: eval752's simulated vendor, a real OpenAI-compatible Chat Completions server on 127.0.0.1.

    from eval752.providers.sim import SimSettings, AnswerKey, start_in_thread
    with start_in_thread(SimSettings(seed=1), AnswerKey.from_items(items)) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="x")

Modules: ``settings`` (settings, profiles, the determinism draw), ``answer_key``, ``answers`` (what is
said per item type), ``behaviours`` (the pipeline and core behaviours), ``tools``, ``judge``, ``faults``,
``wire`` (the OpenAI JSON/SSE format), ``server`` (HTTP server, thread runner, ``eval752-sim``).
"""
from __future__ import annotations

from typing import Any

from .answer_key import AnswerKey
from .behaviours import BEHAVIOURS, Behaviour, register
from .context import Draft, RequestContext
from .settings import PROFILES, LatencySpec, SimSettings, draw, profile

__all__ = ["AnswerKey", "BEHAVIOURS", "Behaviour", "Draft", "LatencySpec", "PROFILES", "RequestContext",
           "SimHandle", "SimServer", "SimSettings", "draw", "main", "profile", "register", "start_in_thread"]


def __getattr__(name: str) -> Any:
    # The server module is imported lazily so that ``python -m eval752.providers.sim.server`` does not
    # find it already imported by its own package.
    if name in ("SimServer", "SimHandle", "start_in_thread", "main"):
        from . import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
