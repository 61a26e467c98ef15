"""Helpers shared by the rule-based checkers: reasoning removal, option checking, text normalisation.

Reasoning blocks
    ``strip_think`` removes every closed ``<think>...</think>`` (or ``<thinking>...</thinking>``) block.
    A closing tag with no opening tag (the opening one was part of the prompt template) means that all
    text before it is reasoning, so it is dropped. An opening tag that is never closed means that the
    reasoning was cut off: the text from that tag on is dropped, which usually leaves no answer.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any, Iterable

from ..errors import ConfigError
from ..types import Response, Verdict

_CLOSED_THINK = re.compile(r"<(think(?:ing)?)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_CLOSE_TAG = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_OPEN_TAG = re.compile(r"<think(?:ing)?>", re.IGNORECASE)


def strip_think(text: str) -> str:
    """The answer part of ``text``: reasoning blocks removed (see the module docstring), then stripped."""
    text = _CLOSED_THINK.sub("", text or "")
    closes = list(_CLOSE_TAG.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _OPEN_TAG.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip()


def answer_text(response: Response) -> tuple[str, Verdict | None]:
    """The response's answer text, or a ready "no answer" verdict when nothing is left to read."""
    raw = response.text or ""
    if not raw.strip():
        reason = f"no response: {response.error}" if response.error else "empty response"
        return "", Verdict(score=0.0, passed=False, reason=reason, extracted=None, answered=False)
    text = strip_think(raw)
    if not text:
        return "", Verdict(0.0, False, "no answer outside <think>", extracted=None, answered=False)
    return text, None


def reject_unknown_options(checker: str, unknown: dict[str, Any], valid: Iterable[str]) -> None:
    """Raise ``ConfigError`` naming the valid options when ``unknown`` is not empty."""
    if not unknown:
        return
    valid = sorted(valid)
    names = sorted(unknown)
    first = names[0]
    close = difflib.get_close_matches(first, valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    noun = "option" if len(names) == 1 else "options"
    listed = ", ".join(repr(n) for n in names)
    takes = f"valid options: {', '.join(valid)}" if valid else "it takes no options"
    raise ConfigError(f"checker {checker!r}: unknown {noun} {listed}{hint}; {takes}")


def require_bool(checker: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"checker {checker!r}: option {name!r} must be true or false, not {value!r}")
    return value


def require_tolerance(checker: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigError(f"checker {checker!r}: option {name!r} must be a number >= 0, not {value!r}")
    return float(value)


_ARTICLES = re.compile(r"\b(?:a|an|the)\b", re.IGNORECASE)


def normalize_text(text: str, *, casefold: bool = True) -> str:
    """NFKC, optional casefold, punctuation removed (kept between two digits, so 3.5 stays 3.5),
    the English articles a/an/the removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    if casefold:
        text = text.casefold()
    kept = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            between_digits = 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()
            if not between_digits:
                continue
        kept.append(ch)
    text = _ARTICLES.sub(" ", "".join(kept))
    return " ".join(text.split())


def non_empty_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]
