"""Free-form text checkers: "exact" (normalised exact match) and "regex".

Both read the response after removing ``<think>`` reasoning (``_extract.strip_think``).

"exact" compares candidates from the response with each acceptable reference (``item.answer``: a string
or a list of strings). With ``normalize`` (the default) both sides are put through Unicode NFKC,
punctuation removal (kept between two digits, so "3.5" stays "3.5"), removal of the English articles
a/an/the, and whitespace collapsing; unless ``case_sensitive`` they are also casefolded. With
``normalize: false`` only surrounding whitespace is stripped (and case folded unless ``case_sensitive``).
The candidates, in order of preference, are: the rest of the line after the LAST answer statement
("answer: X", "the answer is X", "Final answer: X"); the final non-empty line (when the response has
more than one line); the whole response. Any candidate equal to any reference passes. ``extracted`` is
the candidate that matched, or else the most preferred candidate.

"regex" matches ``pattern`` (by default ``item.answer`` is the pattern; a list of patterns passes when
any matches) against the response: ``mode: search`` finds it anywhere, ``mode: fullmatch`` requires it
to cover the whole response with surrounding whitespace stripped. ``flags`` is a string of letters: i
(ignore case), m (multiline), s (dot matches newline), x (verbose), a (ASCII). ``extracted`` is the
matched text; ``answered`` is False only when the response (outside reasoning) is empty.
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import ConfigError, DatasetError
from ..types import Item, Response, Verdict
from ._extract import answer_text, non_empty_lines, normalize_text, reject_unknown_options, require_bool
from .base import CHECKERS, Checker

_ANSWER_STATEMENT = re.compile(
    r"\banswer\b[*_]*(?:\s+is\b|\s*[:=])[\s*_:]*(?P<rest>[^\n]*)", re.IGNORECASE
)


def _references(item: Item, checker: str) -> list[str]:
    answer = item.answer
    refs = [answer] if isinstance(answer, str) else list(answer) if isinstance(answer, (list, tuple)) else []
    if not refs or not all(isinstance(r, str) for r in refs):
        raise DatasetError([f"item {item.id!r}: checker {checker!r} needs a string answer or a list of strings"])
    return refs


@CHECKERS.register("exact")
class ExactChecker(Checker):
    name = "exact"

    def __init__(self, *, normalize: bool = True, case_sensitive: bool = False, **unknown) -> None:
        reject_unknown_options(self.name, unknown, ("normalize", "case_sensitive"))
        self.normalize = require_bool(self.name, "normalize", normalize)
        self.case_sensitive = require_bool(self.name, "case_sensitive", case_sensitive)

    def canonical(self, text: str) -> str:
        if self.normalize:
            return normalize_text(text, casefold=not self.case_sensitive)
        text = text.strip()
        return text if self.case_sensitive else text.casefold()

    def candidates(self, text: str) -> list[tuple[str, str]]:
        """(where, text) pairs in order of preference."""
        found: list[tuple[str, str]] = []
        statements = list(_ANSWER_STATEMENT.finditer(text))
        if statements and statements[-1].group("rest").strip():
            found.append(("answer statement", statements[-1].group("rest").strip(" \t*_")))
        lines = non_empty_lines(text)
        if len(lines) > 1:
            found.append(("final line", lines[-1]))
        found.append(("whole response", text))
        return found

    def check(self, item: Item, response: Response) -> Verdict:
        refs = _references(item, self.name)
        text, empty = answer_text(response)
        if empty:
            return empty
        wanted = {self.canonical(r): r for r in refs}
        cands = self.candidates(text)
        details: dict[str, Any] = {"references": refs}
        for where, cand in cands:
            key = self.canonical(cand)
            if key in wanted:
                details["matched_by"] = where
                return Verdict(1.0, True, f"{where} matches {wanted[key]!r}", cand, details=details)
        where, best = cands[0]
        shown = self.canonical(best)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        expected = repr(self.canonical(refs[0])) if len(refs) == 1 else f"any of {len(refs)} references"
        return Verdict(0.0, False, f"{where} {shown!r} does not match {expected}", best, details=details)


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "a": re.ASCII}
_MODES = ("search", "fullmatch")


def _compile(pattern: Any, flags: int, checker: str) -> re.Pattern:
    if not isinstance(pattern, str):
        raise ConfigError(f"checker {checker!r}: pattern must be a string, not {pattern!r}")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ConfigError(f"checker {checker!r}: bad pattern {pattern!r}: {exc}") from None


@CHECKERS.register("regex")
class RegexChecker(Checker):
    name = "regex"

    def __init__(self, *, pattern: str | None = None, flags: str = "", mode: str = "search", **unknown) -> None:
        reject_unknown_options(self.name, unknown, ("pattern", "flags", "mode"))
        if not isinstance(flags, str) or any(f not in _FLAGS for f in flags):
            raise ConfigError(
                f"checker 'regex': flags must be letters among {', '.join(_FLAGS)}, not {flags!r}"
            )
        if mode not in _MODES:
            raise ConfigError(f"checker 'regex': mode must be one of {', '.join(_MODES)}, not {mode!r}")
        self.flags = 0
        for f in flags:
            self.flags |= _FLAGS[f]
        self.mode = mode
        self.pattern = None if pattern is None else _compile(pattern, self.flags, self.name)
        self._compiled: dict[str, re.Pattern] = {}

    def patterns(self, item: Item) -> list[re.Pattern]:
        if self.pattern is not None:
            return [self.pattern]
        raw = item.answer if isinstance(item.answer, (list, tuple)) else [item.answer]
        if not raw or item.answer is None:
            raise DatasetError([f"item {item.id!r}: checker 'regex' has no pattern and the item no answer"])
        out = []
        for p in raw:
            if p not in self._compiled:
                self._compiled[p] = _compile(p, self.flags, self.name)
            out.append(self._compiled[p])
        return out

    def check(self, item: Item, response: Response) -> Verdict:
        patterns = self.patterns(item)
        text, empty = answer_text(response)
        if empty:
            return empty
        for compiled in patterns:
            m = compiled.fullmatch(text.strip()) if self.mode == "fullmatch" else compiled.search(text)
            if m:
                details = {"pattern": compiled.pattern, "mode": self.mode}
                return Verdict(1.0, True, f"{self.mode} matched {m.group(0)!r}", m.group(0), details=details)
        verb = "found" if self.mode == "search" else "fully matched"
        if len(patterns) == 1:
            reason = f"pattern {patterns[0].pattern!r} not {verb}"
        else:
            reason = f"none of {len(patterns)} patterns {verb}"
        return Verdict(0.0, False, reason, None, details={"mode": self.mode})
