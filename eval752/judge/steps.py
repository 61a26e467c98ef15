"""Pre- and post-processing steps of an LLM judge, by registry name.

Text steps (``TEXT_STEPS``) take a string and return one; they run on the judged response(s) before the
template is rendered (``judge.preprocess``, default ``[strip_think]``) and on the judge's output before it
is parsed (``judge.postprocess``: any text steps, then exactly one parser).

Parsers (``PARSERS``) read the judge's output and return a ``Parsed`` value, or ``Parsed(None, why)`` when
the output cannot be read. The grammar is strict on purpose; anything else is *unparseable* (recorded,
counted, and excluded from the judge mean):

* ``parse_rating``: a rating written ``[[N]]`` (N a number, decimals allowed, ``[[ 7 ]]`` too); every
  ``[[N]]`` in the output must give the same N, and 1 <= N <= ``scale_max``. "[[11]]" on a 1-10 scale,
  "rating: 7" (no brackets), "[[3]] ... [[8]]" and "" are unparseable.
* ``parse_binary``: ``[[YES]]`` or ``[[NO]]`` (also ``[[1]]``/``[[0]]``, ``[[PASS]]``/``[[FAIL]]``, any
  case), or an output that is nothing but ``yes``, ``no``, ``1`` or ``0`` (a trailing period allowed).
  Both a positive and a negative token: unparseable.
* ``parse_pairwise``: ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie), upper case as MT-bench writes them; two
  different ones ("[[A]] [[B]]") or none: unparseable.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import ConfigError
from ..registry import Registry

TextStep = Callable[[str], str]


@dataclass(frozen=True)
class Parsed:
    value: Any  # a float rating, True/False, or "A"/"B"/"C"; None: unparseable
    why: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


Parser = Callable[..., Parsed]
TEXT_STEPS: Registry[str] = Registry("judge text step")
PARSERS: Registry[Parsed] = Registry("judge parser")


@TEXT_STEPS.register("strip_think")
def strip_think(text: str) -> str:
    """Remove ``<think>``/``<thinking>`` reasoning blocks (see ``checkers._extract.strip_think``)."""
    from ..checkers._extract import strip_think as strip_reasoning  # lazy: checkers imports this module

    return strip_reasoning(text)


@TEXT_STEPS.register("strip")
def strip(text: str) -> str:
    return text.strip()


@TEXT_STEPS.register("collapse_whitespace")
def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


_RATING = re.compile(r"\[\[\s*([+-]?\d+(?:\.\d+)?)\s*\]\]")
_BINARY = re.compile(r"\[\[\s*(yes|no|1|0|pass|fail)\s*\]\]", re.IGNORECASE)
_BARE_BINARY = re.compile(r"\s*(yes|no|1|0)\.?\s*", re.IGNORECASE)
_PAIRWISE = re.compile(r"\[\[([ABC])\]\]")
_POSITIVE = {"yes", "1", "pass"}


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


@PARSERS.register("parse_rating")
def parse_rating(text: str, *, scale_max: int = 10, **_: Any) -> Parsed:
    found = [float(m) for m in _RATING.findall(text or "")]
    if not found:
        return Parsed(None, "no [[N]] rating")
    values = sorted(set(found))
    if len(values) > 1:
        return Parsed(None, "several ratings: " + ", ".join(_fmt(v) for v in values))
    value = values[0]
    if not 1 <= value <= scale_max:
        return Parsed(None, f"rating {_fmt(value)} outside 1..{scale_max}")
    return Parsed(value, f"rating {_fmt(value)}")


@PARSERS.register("parse_binary")
def parse_binary(text: str, **_: Any) -> Parsed:
    tokens = {t.lower() for t in _BINARY.findall(text or "")}
    if not tokens:
        bare = _BARE_BINARY.fullmatch(text or "")
        if bare is None:
            return Parsed(None, "no [[YES]]/[[NO]] verdict")
        tokens = {bare.group(1).lower()}
    verdicts = {t in _POSITIVE for t in tokens}
    if len(verdicts) > 1:
        return Parsed(None, "both a positive and a negative verdict")
    value = verdicts.pop()
    return Parsed(value, "YES" if value else "NO")


@PARSERS.register("parse_pairwise")
def parse_pairwise(text: str, **_: Any) -> Parsed:
    found = _PAIRWISE.findall(text or "")
    letters = sorted(set(found))
    if not letters:
        return Parsed(None, "no [[A]]/[[B]]/[[C]] verdict")
    if len(letters) > 1:
        return Parsed(None, "conflicting verdicts " + " and ".join(f"[[{x}]]" for x in letters))
    return Parsed(letters[0], f"[[{letters[0]}]]")


DEFAULT_PARSER = {"scale": "parse_rating", "binary": "parse_binary", "pairwise": "parse_pairwise"}


@dataclass(frozen=True)
class Pipeline:
    """Resolved steps: pre-processing (text), post-processing (text) and the parser."""

    pre: tuple[str, ...]
    post: tuple[str, ...]
    parser: str
    scale_max: int = 10

    @classmethod
    def build(cls, preprocess: list[str] | None, postprocess: list[str] | None, mode: str,
              scale_max: int) -> "Pipeline":
        pre = tuple(preprocess or ())
        for name in pre:
            if name in PARSERS:
                raise ConfigError(f"judge.preprocess: {name!r} is a parser; it belongs last in judge.postprocess")
            TEXT_STEPS.get(name)  # unknown name: error with did-you-mean
        post = list(postprocess) if postprocess else [DEFAULT_PARSER[mode]]
        *text_steps, parser = post
        for name in text_steps:
            if name in PARSERS:
                raise ConfigError(f"judge.postprocess: parser {name!r} must be the last step, once")
            TEXT_STEPS.get(name)
        if parser not in PARSERS:
            if parser in TEXT_STEPS:
                raise ConfigError(f"judge.postprocess must end with a parser ({', '.join(PARSERS.names())}), "
                                  f"not the text step {parser!r}")
            PARSERS.get(parser)
        return cls(pre, tuple(text_steps), parser, scale_max)

    def prepare(self, text: str | None) -> str:
        text = text or ""
        for name in self.pre:
            text = TEXT_STEPS.get(name)(text)
        return text

    def parse(self, output: str | None) -> Parsed:
        text = output or ""
        for name in self.post:
            text = TEXT_STEPS.get(name)(text)
        return PARSERS.get(self.parser)(text, scale_max=self.scale_max)
