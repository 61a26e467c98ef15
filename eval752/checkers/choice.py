"""Multiple-choice checkers: "choice" (one correct option) and "choice_set" (a set of correct options).

Choices are lettered A, B, C... in the order of ``item.choices``; ``item.answer`` holds the correct choice
text (a list of them for "choice_set"). Reasoning in ``<think>`` blocks is removed first (see
``_extract.strip_think``). The response text is then read for four kinds of evidence, strongest first:

1. explicit answer statements: "Answer: B", "the answer is (B)", "Final answer: B", "**Answer:** B",
   "the correct answers are A and C", "answer: option B", "I choose B", "\\boxed{B}";
2. a final line that is nothing but letters: "B", "b.", "(B)", "B)", "**B**", "Option B", "A, C",
   "(A)(C)", "AC", or one letter followed by that option's own text ("B. Paris");
3. letters marked as options anywhere: "(B)", "[B]", "**B**", "Option B", a line that is only a letter;
4. option text: the text of a choice occurring as whole words (case-insensitive); a choice whose every
   occurrence lies inside an occurrence of a longer choice does not count.

Ambiguity policy. The strongest kind of evidence present decides; weaker kinds are not consulted.
Among explicit statements the LAST one wins (models correct themselves: "Answer: A ... no, the answer is
B" gives B); every statement found is listed in ``details["explicit"]``. For "choice", if the deciding
evidence names two or more different letters ("Answer: A and C", "(A) ... (C)" with no statement and no
bare final line, or two choices' texts) the response is ambiguous: score 0, ``answered`` False, reason
"ambiguous: A and C both asserted". For "choice_set" the deciding evidence is the set.

False positives. A lowercase letter standing alone (not bracketed or bold) counts only when nothing but
punctuation follows it on its line, so "the answer is a bit unclear" asserts nothing. An uppercase
word-letter such as the article in "A good question" is never evidence by itself: a letter needs an
answer statement, brackets, bold, the word "option", or a line of its own. Letters past the last choice
are not options; they are listed in ``details["out_of_range"]`` and otherwise ignored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import DatasetError
from ..types import Item, Response, Verdict
from ._extract import answer_text, normalize_text, reject_unknown_options, require_bool
from .base import CHECKERS, Checker

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

_DECO = r"[*_]{0,2}"
_ONE = (
    rf"{_DECO}(?:[(\[]\s*(?P<l1>[A-Za-z])\s*[)\]]|(?<![A-Za-z0-9])(?P<l2>[A-Za-z])(?![A-Za-z0-9])[)\]]?)"
    rf"{_DECO}"
)
_COMPACT = r"(?<![A-Za-z0-9])(?-i:[A-Z]{2,})(?![A-Za-z0-9])"
_ITEM = rf"{_DECO}(?P<compact>{_COMPACT}){_DECO}|{_ONE}"
_ITEM_RE = re.compile(_ITEM, re.IGNORECASE)
_ITEM_PLAIN = re.sub(r"\(\?P<\w+>", "(?:", _ITEM)
_SEP = r"[^\S\n]*(?:,|;|/|&|\+|\band\b)?[^\S\n]*"
_LIST = re.compile(
    rf"(?:(?:options?|choices?)[^\S\n]+)?(?:{_ITEM_PLAIN})(?:{_SEP}(?:{_ITEM_PLAIN}))*", re.IGNORECASE
)
_VERB = r"(?:is|are|would\s+be|should\s+be|will\s+be|must\s+be)"
_EXPLICIT = re.compile(
    rf"""(?:
        \b(?:(?:final|correct|best|right|my)\s+)?answers?(?:\s+to\s+(?:this|the)\s+question)?
          (?:[\s*_]*[:=\-–—]|\s+{_VERB}\b[\s*_]*:?|\s+(?=(?:options?|choices?)\s))
      | \bcorrect\s+(?:options?|choices?)(?:[\s*_]*:|\s+{_VERB}\b[\s*_]*:?)
      | \bI\s+(?:choose|pick|select|go\s+with)\b
    )[\s*_]*""",
    re.IGNORECASE | re.VERBOSE,
)
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text(?:bf)?\{)?\s*(?P<body>[^{}]*)\}", re.IGNORECASE)
_MARKED = re.compile(
    r"""(?<![A-Za-z0-9])(?:
        \(\s*(?P<p>[A-Za-z])\s*\)
      | \[\s*(?P<s>[A-Za-z])\s*\]
      | (?P<bo>\*\*|__|\*)\(?(?P<b>[A-Za-z])\)?[.:)]?(?P=bo)
      | \b(?:option|choice)\s+(?P<o>[A-Za-z])(?![A-Za-z0-9])
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_BARE_LINE = re.compile(rf"[*_]*(?:(?:option|choice)\s+)?(?:{_ONE})[.:]?[*_]*", re.IGNORECASE)
_LOWER_END = re.compile(r"[^\S\n]*(?:$|\n|[.,;:!?)](?:\s|$))")


@dataclass
class Evidence:
    """The letters a text asserts, by kind, in order of appearance (see the module docstring)."""

    explicit: list[list[str]] = field(default_factory=list)  # one letter list per answer statement
    final_line: list[str] = field(default_factory=list)
    marked: list[str] = field(default_factory=list)
    option_text: list[str] = field(default_factory=list)
    out_of_range: list[str] = field(default_factory=list)

    def deciding(self) -> tuple[str, list[str]]:
        """The strongest kind present and its letters: ("explicit", [...]) ... or ("none", [])."""
        if self.explicit:
            return "explicit", self.explicit[-1]
        for kind in ("final_line", "marked", "option_text"):
            if getattr(self, kind):
                return kind, getattr(self, kind)
        return "none", []


def _list_at(text: str, pos: int) -> tuple[list[str], int] | None:
    """The letter list starting at ``pos`` (uppercased, in order), or None."""
    m = _LIST.match(text, pos)
    if not m:
        return None
    letters: list[str] = []
    bare_lower = False
    for item in _ITEM_RE.finditer(m.group(0)):
        if item.group("compact"):
            compact = item.group("compact")
            if len(set(compact)) != len(compact):  # "ADD", "DAD" are words, not letter lists
                return None
            letters.extend(compact)
        elif item.group("l1"):
            letters.append(item.group("l1"))
        else:
            letter = item.group("l2")
            letters.append(letter)
            bare_lower |= letter.islower() and item.group(0) == letter
    if bare_lower and not _LOWER_END.match(text, m.end()):
        return None
    return [letter.upper() for letter in letters], m.end()


def _final_line_letters(line: str, choices: tuple[str, ...]) -> list[str]:
    found = _list_at(line, 0)
    if not found:
        return []
    letters, end = found
    rest = line[end:].strip(" \t.:*_")
    if not rest:
        return letters
    idx = LETTERS.find(letters[0])
    if len(letters) == 1 and idx < len(choices) and normalize_text(rest) == normalize_text(choices[idx]):
        return letters
    return []


def option_text_indices(text: str, choices: tuple[str, ...]) -> list[int]:
    """Indices of the choices whose text occurs in ``text`` as whole words, by first occurrence."""
    folded = text.casefold()
    spans: dict[int, list[tuple[int, int]]] = {}
    for i, choice in enumerate(choices):
        needle = choice.strip().casefold()
        if needle:
            found = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(needle)}(?!\w)", folded)]
            if found:
                spans[i] = found

    def inside_longer(i: int, a: int, b: int) -> bool:
        return any(s <= a and b <= e and b - a < e - s for j in spans if j != i for s, e in spans[j])

    kept = [i for i, own in spans.items() if not all(inside_longer(i, a, b) for a, b in own)]
    return sorted(kept, key=lambda i: spans[i][0][0])


def find_evidence(text: str, choices: tuple[str, ...]) -> Evidence:
    n = min(len(choices), len(LETTERS))
    ev = Evidence()

    def keep(letters: list[str]) -> list[str]:
        kept: list[str] = []
        for letter in letters:
            if LETTERS.index(letter) >= n:
                if letter not in ev.out_of_range:
                    ev.out_of_range.append(letter)
            elif letter not in kept:
                kept.append(letter)
        return kept

    statements = []
    for m in _EXPLICIT.finditer(text):
        found = _list_at(text, m.end())
        if found:
            statements.append((m.start(), found[0]))
    for m in _BOXED.finditer(text):
        found = _list_at(m.group("body").strip(), 0)
        if found:
            statements.append((m.start(), found[0]))
    for _, letters in sorted(statements, key=lambda s: s[0]):
        kept = keep(letters)
        if kept:
            ev.explicit.append(kept)

    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines:
        ev.final_line = keep(_final_line_letters(lines[-1], choices[:n]))

    marked: list[tuple[int, str]] = []
    for m in _MARKED.finditer(text):
        letter = m.group("p") or m.group("s") or m.group("b") or m.group("o")
        if m.group("o") and letter.islower() and not _LOWER_END.match(text, m.end()):
            continue
        marked.append((m.start(), letter.upper()))
    pos = 0
    for raw in text.splitlines(keepends=True):
        bare = _BARE_LINE.fullmatch(raw.strip())
        if bare:
            marked.append((pos, (bare.group("l1") or bare.group("l2")).upper()))
        pos += len(raw)
    ev.marked = keep([letter for _, letter in sorted(marked)])
    ev.option_text = [LETTERS[i] for i in option_text_indices(text, choices[:n])]
    return ev


def join_letters(letters: list[str]) -> str:
    """"A", "A and C", "A, B and C"."""
    if len(letters) <= 1:
        return "".join(letters)
    return ", ".join(letters[:-1]) + " and " + letters[-1]


def _letter_of(item: Item, text: str) -> str:
    choices = tuple(item.choices or ())
    if text in choices:
        return LETTERS[choices.index(text)]
    raise DatasetError([f"item {item.id!r}: answer {text!r} is not one of its choices"])


def _details(ev: Evidence, method: str, expected: list[str]) -> dict:
    details: dict = {"expected": expected, "method": method}
    if ev.explicit:
        details["explicit"] = ev.explicit
    if ev.out_of_range:
        details["out_of_range"] = ev.out_of_range
    return details


@CHECKERS.register("choice")
class ChoiceChecker(Checker):
    """One correct option; score 1.0 when the extracted letter is the correct one, else 0.0."""

    name = "choice"

    def __init__(self, **unknown) -> None:
        reject_unknown_options(self.name, unknown, ())

    def check(self, item: Item, response: Response) -> Verdict:
        expected = _letter_of(item, item.answer)
        text, empty = answer_text(response)
        if empty:
            return empty
        ev = find_evidence(text, tuple(item.choices or ()))
        method, letters = ev.deciding()
        details = _details(ev, method, [expected])
        if not letters:
            return Verdict(0.0, False, "no option found", None, answered=False, details=details)
        if len(letters) > 1:
            both = "both" if len(letters) == 2 else "all"
            reason = f"ambiguous: {join_letters(letters)} {both} asserted"
            return Verdict(0.0, False, reason, None, answered=False, details=details)
        got = letters[0]
        ok = got == expected
        return Verdict(float(ok), ok, f"extracted {got}, expected {expected}", got, details=details)


@CHECKERS.register("choice_set")
class ChoiceSetChecker(Checker):
    """A set of correct options; score 1.0 for the exact set (or the F1 with ``partial_credit``)."""

    name = "choice_set"

    def __init__(self, *, partial_credit: bool = False, **unknown) -> None:
        reject_unknown_options(self.name, unknown, ("partial_credit",))
        self.partial_credit = require_bool(self.name, "partial_credit", partial_credit)

    def check(self, item: Item, response: Response) -> Verdict:
        answers = [item.answer] if isinstance(item.answer, str) else list(item.answer or ())
        expected = sorted({_letter_of(item, a) for a in answers})
        text, empty = answer_text(response)
        if empty:
            return empty
        ev = find_evidence(text, tuple(item.choices or ()))
        method, letters = ev.deciding()
        got = sorted(letters)
        hits = len(set(got) & set(expected))
        precision = hits / len(got) if got else 0.0
        recall = hits / len(expected) if expected else float(not got)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        exact = got == expected
        details = _details(ev, method, expected)
        details.update(precision=precision, recall=recall, f1=f1)
        if not got:
            return Verdict(0.0, False, "no option found", None, answered=False, details=details)
        score = f1 if self.partial_credit else float(exact)
        reason = f"extracted {join_letters(got)}, expected {join_letters(expected) or 'nothing'}"
        return Verdict(score, exact, reason, got, details=details)
