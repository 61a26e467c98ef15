"""What one request carries through the behaviour pipeline (``RequestContext``) and the reply being
drafted for it (``Draft``)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .settings import SimSettings, draw


def message_text(content: Any) -> str:
    """The text of a chat message's content: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def count_tokens(text: str | None) -> int:
    """The simulator's tokenizer: one token per whitespace-separated word."""
    return len(text.split()) if text else 0


@dataclass
class Draft:
    """One choice of the reply as the behaviours shape it; ``server``/``wire`` turn it into JSON."""

    index: int = 0
    content: str | None = ""
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    correct: bool | None = None  # whether the answering behaviour chose the right answer (None: unknown)
    extra: dict[str, Any] = field(default_factory=dict)  # free room for later behaviours


@dataclass(eq=False)
class RequestContext:
    """One chat-completions request, parsed once. ``item`` is the identity used in every ``draw``."""

    settings: SimSettings
    body: dict[str, Any]
    raw: bytes
    item_header: str | None
    entry: dict[str, Any] | None
    prompt: str
    request: Any = None  # the aiohttp web.Request (faults use its transport)
    attempt_counter: dict[str, int] | None = None
    cut_stream: bool = False  # set by a fault: send half of the reply, then drop the connection
    notes: dict[str, Any] = field(default_factory=dict)
    _attempt: int | None = None
    _item: str | None = None

    # -- request parameters ----------------------------------------------------------------------
    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages")
        return msgs if isinstance(msgs, list) else []

    @property
    def item(self) -> str:
        if self._item is None:
            if self.item_header:
                self._item = self.item_header
            elif self.entry is not None:
                self._item = self.entry["id"]
            else:
                self._item = "p:" + hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()[:16]
        return self._item

    @property
    def item_type(self) -> str | None:
        return self.entry["type"] if self.entry is not None else None

    @property
    def req_seed(self) -> Any:
        return self.body.get("seed")

    @property
    def temperature(self) -> float:
        t = self.body.get("temperature")
        return 1.0 if t is None else float(t)

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        opts = self.body.get("stream_options")
        return isinstance(opts, dict) and bool(opts.get("include_usage"))

    @property
    def n(self) -> int:
        n = self.body.get("n")
        return max(1, min(int(n), 16)) if isinstance(n, int) else 1

    @property
    def model(self) -> str:
        return str(self.body.get("model") or self.settings.model)

    @property
    def tools(self) -> list[dict[str, Any]]:
        tools = self.body.get("tools")
        return tools if isinstance(tools, list) else []

    @property
    def max_tokens(self) -> int | None:
        v = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        return v if isinstance(v, int) and v >= 0 else None

    # -- determinism -----------------------------------------------------------------------------
    def draw(self, purpose: str, index: int = 0) -> float:
        """``settings.draw(seed, item, req_seed, purpose)``; choice ``index > 0`` appends ``#index``."""
        if index:
            purpose = f"{purpose}#{index}"
        return draw(self.settings.seed, self.item, self.req_seed, purpose)

    def choose(self, purpose: str, options: list[Any] | tuple[Any, ...], index: int = 0) -> Any:
        return options[int(self.draw(purpose, index) * len(options))]

    @property
    def request_hash(self) -> str:
        """The request's identity for faults: its exact body plus the item header."""
        h = hashlib.sha256(self.raw)
        h.update(b"\0" + (self.item_header or "").encode("utf-8"))
        return h.hexdigest()[:32]

    @property
    def attempt(self) -> int:
        """How many times the server saw this exact request before (0 the first time)."""
        if self._attempt is None:
            counter = self.attempt_counter if self.attempt_counter is not None else {}
            key = self.request_hash
            self._attempt = counter.get(key, 0)
            counter[key] = self._attempt + 1
        return self._attempt
