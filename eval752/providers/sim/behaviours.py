"""Behaviours: the small pieces the simulated vendor is assembled from.

A ``Behaviour`` has two hooks. ``await before(ctx)`` runs before anything is drafted and may return an
aiohttp response to short-circuit the request (faults, latency). ``after(ctx, draft)`` transforms one
drafted choice (answering, reasoning, tool calls, later vendor defects). Behaviours are registered by
name in ``BEHAVIOURS`` and created with their options as keyword arguments.

The pipeline of a server is

* implicit behaviours, always present: ``answer``, ``judge``, ``tool_calls``; ``reasoning`` when
  ``SimSettings.reasoning``; ``latency`` when ``SimSettings.latency`` is non-zero;
* then ``SimSettings.behaviours`` in their order, each ``"name"`` or ``{"name": ..., **options}`` (or
  ``{"name": ..., "options": {...}}``; ``kind`` is accepted for ``name``).

A configured behaviour with an implicit name replaces the implicit one in its place (so
``{"name": "reasoning"}`` switches reasoning on). ``before`` hooks run configured-first (a 429 comes
back without the latency), ``after`` hooks run implicit-first (defects see the finished answer).
"""
from __future__ import annotations

import asyncio
from typing import Any, Mapping

from ...registry import Registry
from .answers import DRAFTERS, draft_unknown
from .context import Draft, RequestContext, count_tokens
from .settings import LatencySpec, SimSettings

IMPLICIT = ("answer", "judge", "tool_calls", "reasoning", "latency")


class Behaviour:
    """Base class: both hooks do nothing. Subclasses set ``name`` and take options in ``__init__``."""

    name = "behaviour"

    def __init__(self, settings: SimSettings | None = None) -> None:
        self.settings = settings

    async def before(self, ctx: RequestContext) -> Any:
        return None

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        return draft

    def has_before(self) -> bool:
        return type(self).before is not Behaviour.before

    def has_after(self) -> bool:
        return type(self).after is not Behaviour.after


BEHAVIOURS: Registry[Behaviour] = Registry("sim behaviour")


def register(cls: type[Behaviour]) -> type[Behaviour]:
    BEHAVIOURS.register(cls.name)(cls)
    return cls


@register
class AnswerBehaviour(Behaviour):
    """The core: decide right or wrong (``draw("correct") < p_eff``) and draft the reply for the item type."""

    name = "answer"

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        entry = ctx.entry
        if entry is None:
            draft.content = draft_unknown(ctx, draft.index)
            draft.correct = None
            return draft
        p = ctx.settings.effective_accuracy(entry["type"], ctx.temperature)
        correct = ctx.draw("correct", draft.index) < p
        drafter = DRAFTERS.get(entry["type"], DRAFTERS["freeform"])
        draft.content = drafter(ctx, entry, correct, draft.index)
        draft.correct = correct
        return draft


@register
class ReasoningBehaviour(Behaviour):
    """Adds ``reasoning_content``: a short deterministic chain of thought that ends in the reply."""

    name = "reasoning"

    def __init__(self, settings: SimSettings | None = None, words: int = 0) -> None:
        super().__init__(settings)
        self.words = words  # extra filler words, to simulate long reasoning

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        prompt = " ".join(ctx.prompt.split()[:12])
        lines = [f"The user asks: {prompt}", "I consider what is being asked and check each possibility."]
        if self.words:
            lines.append(" ".join(["hmm"] * self.words))
        if draft.tool_calls:
            lines.append(f"I should call the tool {draft.tool_calls[0]['function']['name']}.")
        elif draft.content:
            last = draft.content.strip().splitlines()[-1] if draft.content.strip() else ""
            lines.append(f"So I will reply: {last[:80]}")
        draft.reasoning = "\n".join(lines)
        return draft


@register
class LatencyBehaviour(Behaviour):
    """Waits ``LatencySpec.sample_ms(draw("latency"))`` before the reply is drafted."""

    name = "latency"

    def __init__(self, settings: SimSettings | None = None, kind: str | None = None,
                 mean_ms: float | None = None, spread_ms: float | None = None) -> None:
        super().__init__(settings)
        base = settings.latency if settings is not None else LatencySpec()
        self.spec = LatencySpec(kind or base.kind, base.mean_ms if mean_ms is None else float(mean_ms),
                                base.spread_ms if spread_ms is None else float(spread_ms))

    async def before(self, ctx: RequestContext) -> Any:
        ms = self.spec.sample_ms(ctx.draw("latency"))
        if ms > 0:
            await asyncio.sleep(ms / 1000.0)
        return None


def spec_name_options(spec: Any) -> tuple[str, dict[str, Any]]:
    """Normalise ``"name"``, ``{"name": n, **opts}`` or ``{"name": n, "options": {...}}``."""
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping):
        d = dict(spec)
        name = d.pop("name", None) or d.pop("kind", None)
        if not isinstance(name, str):
            raise ValueError(f"a behaviour spec needs a 'name': {spec!r}")
        opts = dict(d.pop("options", None) or {})
        opts.update(d)
        return name, opts
    raise ValueError(f"a behaviour is a name or a mapping with 'name', not {spec!r}")


def _load_builtins() -> None:
    from . import faults, judge, tools  # noqa: F401  (they register themselves)
    from . import defects  # noqa: F401  (vendor defects and the official verifier answer mode)


def create(name: str, settings: SimSettings, **options: Any) -> Behaviour:
    _load_builtins()
    return BEHAVIOURS.create(name, settings=settings, **options)


class Pipeline:
    """The behaviours of one server, split into the hooks each actually implements."""

    def __init__(self, behaviours: list[Behaviour]) -> None:
        self.behaviours = behaviours
        self.befores = [b for b in behaviours if b.has_before()]
        self.afters = [b for b in behaviours if b.has_after()]
        self.befores.sort(key=lambda b: b.name in IMPLICIT)  # configured first; stable otherwise

    async def run_before(self, ctx: RequestContext) -> Any:
        for b in self.befores:
            response = await b.before(ctx)
            if response is not None:
                return response
        return None

    def draft(self, ctx: RequestContext, index: int) -> Draft:
        draft = Draft(index=index)
        for b in self.afters:
            draft = b.after(ctx, draft)
        return draft


def build_pipeline(settings: SimSettings) -> Pipeline:
    settings.validate()
    _load_builtins()
    configured = [spec_name_options(s) for s in settings.behaviours]
    by_name = {name: opts for name, opts in configured if name in IMPLICIT}
    wanted = ["answer", "judge", "tool_calls"]
    if settings.reasoning or "reasoning" in by_name:
        wanted.append("reasoning")
    if settings.latency.active or "latency" in by_name:
        wanted.append("latency")
    behaviours = [create(name, settings, **by_name.get(name, {})) for name in wanted]
    behaviours += [create(name, settings, **opts) for name, opts in configured if name not in IMPLICIT]
    return Pipeline(behaviours)


def truncate_to_budget(ctx: RequestContext, draft: Draft) -> Draft:
    """Honour ``max_tokens``: reasoning spends the budget first; the content is cut to what is left."""
    budget = ctx.max_tokens
    if budget is None or draft.tool_calls:
        return draft
    used = count_tokens(draft.reasoning)
    if used > budget:
        draft.reasoning = " ".join((draft.reasoning or "").split()[:budget])
        used = budget
    words = (draft.content or "").split()
    if used + len(words) > budget:
        draft.content = " ".join(words[: budget - used])
        draft.finish_reason = "length"
    return draft
