"""The "numeric" checker: the model's final number against a numeric reference.

The final number of a response (outside ``<think>`` reasoning) is, in order of preference:
1. the first number after the last "####" (GSM8K style);
2. the first number inside the last ``\\boxed{...}``;
3. the first number on the rest of the line of the last answer statement that has one ("the answer is
   72", "Answer: $1,234.50", "Final answer = 3/4");
4. the last number in the text.
Numbers may carry a sign (also U+2212), a currency symbol ($ EUR GBP JPY signs), thousands separators in
groups of three ("1,234,567"), a decimal part, an exponent ("1.5e-3"), a percent sign ("50%" is 50), or
be a simple fraction of two plain numbers ("1/2" and LaTeX "\\frac{1}{2}" are 0.5; "3/0" is no number).
"1,23" is two numbers.

The reference is ``item.answer``: a number, or a string holding one, or a GSM8K answer ("reasoning ...
#### 72"), whose number after "####" is used. A reference with no number is a dataset error. The score
is 1.0 when ``math.isclose(got, reference, rel_tol=rel_tol, abs_tol=abs_tol)``.
"""
from __future__ import annotations

import math
import re

from ..errors import DatasetError
from ..types import Item, Response, Verdict
from ._extract import answer_text, reject_unknown_options, require_tolerance, strip_think
from .base import CHECKERS, Checker

_NUMBER = re.compile(
    r"""(?<![\w.])
    (?P<sign>[-+\u2212]?)
    [$\u20ac\u00a3\u00a5]?
    (?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?:/(?P<den>\d+(?:\.\d+)?)(?![\d.,]\d)|(?P<exp>[eE][-+]?\d+))?
    (?P<pct>[^\S\n]?%)?""",
    re.VERBOSE,
)
_ANSWER_MARKER = re.compile(r"\banswer\b[*_]*(?:\s+is\b|\s*[:=])", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{(?P<body>(?:[^{}]|\{[^{}]*\})*)\}")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\{\s*(-?\d+)\s*\}\{\s*(\d+)\s*\}")


def _value(m: re.Match) -> float | None:
    number = float(m.group("body").replace(",", "") + (m.group("exp") or ""))
    if m.group("den") is not None:
        den = float(m.group("den"))
        if den == 0:
            return None
        number /= den
    return -number if m.group("sign") in ("-", "\u2212") else number


def _numbers(text: str) -> list[tuple[float, str]]:
    """(value, matched text) of every number in ``text``, in order."""
    out = []
    for m in _NUMBER.finditer(text):
        value = _value(m)
        if value is not None:
            out.append((value, m.group(0)))
    return out


def _final_number(text: str) -> tuple[float, str, str] | None:
    """(value, matched text, where it came from) of the final number of ``text``."""
    text = _LATEX_FRAC.sub(r"\1/\2", text)
    if "####" in text:
        found = _numbers(text.rsplit("####", 1)[1])
        if found:
            return (*found[0], "after ####")
    boxes = list(_BOXED.finditer(text))
    if boxes:
        found = _numbers(boxes[-1].group("body"))
        if found:
            return (*found[0], "boxed")
    for marker in reversed(list(_ANSWER_MARKER.finditer(text))):
        found = _numbers(text[marker.end():].split("\n", 1)[0])
        if found:
            return (*found[0], "answer statement")
    found = _numbers(text)
    if found:
        return (*found[-1], "last number")
    return None


def extract_final_number(text: str) -> float | None:
    """The model's final number in ``text`` (see the module docstring), or None."""
    found = _final_number(strip_think(text or ""))
    return found[0] if found else None


def gsm8k_reference(answer: str) -> str:
    """The reference of a GSM8K answer: the text after the last "####", stripped, commas removed."""
    if "####" not in answer:
        raise ValueError(f"not a GSM8K answer (no '####'): {answer[:60]!r}")
    return answer.rsplit("####", 1)[1].strip().replace(",", "")


def parse_reference(item: Item) -> float:
    answer = item.answer
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return float(answer)
    if isinstance(answer, str):
        text = gsm8k_reference(answer) if "####" in answer else answer.strip()
        whole = _NUMBER.fullmatch(text)
        value = _value(whole) if whole else extract_final_number(text)
        if value is not None:
            return value
    raise DatasetError([f"item {item.id!r}: numeric reference {answer!r} is not a number"])


def format_number(x: float) -> str:
    """72.0 -> "72", 0.5 -> "0.5"."""
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


@CHECKERS.register("numeric")
class NumericChecker(Checker):
    name = "numeric"

    def __init__(self, *, abs_tol: float = 1e-6, rel_tol: float = 0.0, **unknown) -> None:
        reject_unknown_options(self.name, unknown, ("abs_tol", "rel_tol"))
        self.abs_tol = require_tolerance(self.name, "abs_tol", abs_tol)
        self.rel_tol = require_tolerance(self.name, "rel_tol", rel_tol)

    def check(self, item: Item, response: Response) -> Verdict:
        reference = parse_reference(item)
        text, empty = answer_text(response)
        if empty:
            return empty
        details = {"expected": reference}
        found = _final_number(text)
        if found is None:
            return Verdict(0.0, False, "no number found", None, answered=False, details=details)
        value, matched, where = found
        details.update(matched=matched.strip(), source=where)
        ok = math.isclose(value, reference, rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        reason = f"extracted {format_number(value)}, expected {format_number(reference)}"
        return Verdict(float(ok), ok, reason, value, details=details)
