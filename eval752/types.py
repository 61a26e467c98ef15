"""The vocabulary of eval752: what an evaluation is made of.

An ``Item`` is one question of a dataset. The runner turns it into one ``Request`` per sample, a provider
answers each with a ``Response``, a checker judges the response and gives a ``Verdict``, and the runner
writes one ``ResultRow`` per item and sample to ``results.jsonl``. Everything here is a frozen dataclass
of plain JSON-able values, so rows round-trip through JSON without loss.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

ITEM_TYPES = ("mcq_single", "mcq_multi", "freeform", "code", "judge_pairwise")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the form every hash in eval752 is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_of(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Item:
    """One dataset entry. ``answer`` is a choice (mcq_single), a list of choices (mcq_multi) or a reference."""

    id: str
    type: str
    text: str
    section: str = ""
    images: tuple[str, ...] = ()
    audio: tuple[str, ...] = ()
    video: tuple[str, ...] = ()
    choices: tuple[str, ...] | None = None
    answer: Any = None
    checker: Any = None  # per-item checker: a registry name or a mapping {"kind": ..., options}
    criteria: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)  # per-item generation overrides
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The native JSONL form of this item (without its section, which is the file it lives in)."""
        inputs: dict[str, Any] = {"text": self.text}
        for kind in ("images", "audio", "video"):
            if getattr(self, kind):
                inputs[kind] = list(getattr(self, kind))
        out: dict[str, Any] = {"id": self.id, "type": self.type, "inputs": inputs}
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.answer is not None:
            out["answer"] = list(self.answer) if isinstance(self.answer, tuple) else self.answer
        for name in ("checker", "criteria"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.params:
            out["params"] = dict(self.params)
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


@dataclass(frozen=True)
class Request:
    """What is sent for one item and sample: chat messages plus generation parameters."""

    item_id: str
    sample: int
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[Mapping[str, Any], ...] | None = None

    def cache_key(self, model: str, api_base: str | None) -> str:
        """Same model, endpoint, messages, parameters and sample index: same key."""
        return sha256_of(
            {
                "model": model,
                "api_base": api_base or "",
                "messages": list(self.messages),
                "params": dict(self.params),
                "tools": list(self.tools) if self.tools else None,
                "sample": self.sample,
            }
        )


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # as the vendor sent it: normally a JSON string


@dataclass(frozen=True)
class Response:
    """A provider's answer, or the record of its failure (``error`` set, ``text`` empty)."""

    text: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    attempts: int = 1
    error: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Verdict:
    """A checker's judgement. ``score`` is in [0, 1]; ``answered`` is False when nothing could be extracted."""

    score: float
    passed: bool
    reason: str
    extracted: Any = None
    answered: bool = True
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResultRow:
    """One line of ``results.jsonl``: an item, a sample, what was sent, what came back and how it scored."""

    item_id: str
    sample: int
    section: str
    type: str
    checker: str
    request: Mapping[str, Any]
    response: Mapping[str, Any]
    verdict: Mapping[str, Any] | None
    status: str  # "ok" (scored) or "error" (the request failed; scored as wrong, counted apart)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def response_to_json(r: Response) -> dict[str, Any]:
    d = asdict(r)
    d["tool_calls"] = [asdict(t) for t in r.tool_calls]
    return d


def response_from_json(d: Mapping[str, Any]) -> Response:
    calls = tuple(ToolCall(**t) for t in d.get("tool_calls") or ())
    known = {k: v for k, v in d.items() if k in Response.__dataclass_fields__ and k != "tool_calls"}
    return Response(tool_calls=calls, **known)


def verdict_to_json(v: Verdict) -> dict[str, Any]:
    d = asdict(v)
    d["details"] = dict(v.details)
    return d
