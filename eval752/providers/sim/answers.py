"""What the simulated model says: one drafting function per item type, right or wrong on request.

Each drafter is ``draft(ctx, entry, correct, index) -> str``. Styles and wrong answers are chosen with
``ctx.draw`` so the same request always gets the same words.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from .context import RequestContext

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[\).:]\s+\S", re.MULTILINE)
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)$")
WORKING_LINES = (
    "Let me work through this step by step.",
    "Working: I consider what the question asks and compute the result.",
    "First I restate the problem, then I solve it.",
)

Drafter = Callable[[RequestContext, dict, bool, int], str]


# -- multiple choice -------------------------------------------------------------------------------
def option_count(entry: dict | None, prompt: str) -> int:
    if entry is not None and entry.get("choices"):
        return len(entry["choices"])
    letters = _OPTION_LINE.findall(prompt)
    return (LETTERS.index(max(letters)) + 1) if letters else 4


def choice_index(value: Any, choices: list | None) -> int | None:
    """The 0-based index an answer names: an int, a choice's exact text, or a letter (in that order)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if choices and value in choices:
            return choices.index(value)
        v = value.strip().strip("()").strip().upper()
        if len(v) == 1 and v in LETTERS:
            return LETTERS.index(v)
        if choices:
            folded = [str(c).strip().casefold() for c in choices]
            if value.strip().casefold() in folded:
                return folded.index(value.strip().casefold())
    return None


def _mcq_style(ctx: RequestContext, letter: str, text: str | None, index: int) -> str:
    style = int(ctx.draw("style", index) * 4)
    if style == 0:
        return letter
    if style == 1:
        return f"Answer: {letter}"
    if style == 2:
        return f"The answer is ({letter})."
    return f"{letter}) {text}" if text else f"Answer: {letter}"


def draft_mcq_single(ctx: RequestContext, entry: dict, correct: bool, index: int) -> str:
    choices = entry.get("choices")
    k = max(1, option_count(entry, ctx.prompt))
    right = choice_index(entry.get("answer"), choices)
    right = 0 if right is None or not 0 <= right < max(k, 1) else right
    if correct or k < 2:
        pick = right if correct else (right + 1) % max(k, 2)
    else:
        others = [i for i in range(k) if i != right]
        pick = others[int(ctx.draw("wrong", index) * len(others))]
    text = str(choices[pick]) if choices and pick < len(choices) else None
    return _mcq_style(ctx, LETTERS[pick % 26], text, index)


def draft_mcq_multi(ctx: RequestContext, entry: dict, correct: bool, index: int) -> str:
    choices = entry.get("choices")
    k = max(2, option_count(entry, ctx.prompt))
    raw = entry.get("answer")
    raw = raw if isinstance(raw, (list, tuple)) else ([] if raw is None else [raw])
    right = sorted({i for i in (choice_index(v, choices) for v in raw) if i is not None and 0 <= i < k})
    picked = set(right)
    if not correct:
        flip = int(ctx.draw("wrong", index) * k)
        picked ^= {flip}
        if not picked:
            picked = {(flip + 1) % k}
    return "Answer: " + ", ".join(LETTERS[i] for i in sorted(picked))


# -- free text -------------------------------------------------------------------------------------
def reference_text(answer: Any) -> str | None:
    if isinstance(answer, (list, tuple)):
        answer = answer[0] if answer else None
    if answer is None:
        return None
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    return str(answer)


def perturb(ref: str, u: float) -> str:
    """A near miss: a different number for numbers, otherwise one letter or digit changed."""
    s = ref.strip()
    plain = s.replace(",", "")
    if _NUMBER.match(plain):
        step = 1 + int(u * 9)
        if "." in plain:
            decimals = len(plain.split(".")[1])
            return f"{float(plain) + step:.{decimals}f}"
        return str(int(plain) + step)
    positions = [i for i, c in enumerate(s) if c.isalnum()]
    if not positions:
        return "I do not know."
    i = positions[int(u * len(positions))]
    c = s[i]
    if c.isdigit():
        new = str((int(c) + 1) % 10)
    elif c.isascii():
        base = "a" if c.islower() else "A"
        new = chr(ord(base) + (ord(c) - ord(base) + 1) % 26)
    else:
        new = "x" if c.lower() != "x" else "y"
    return s[:i] + new + s[i + 1:]


def draft_freeform(ctx: RequestContext, entry: dict, correct: bool, index: int) -> str:
    working = ctx.choose("working", WORKING_LINES, index)
    ref = reference_text(entry.get("answer"))
    if ref is None:
        return f"{working}\n{generic_text(ctx, index)}"
    said = ref if correct else perturb(ref, ctx.draw("wrong", index))
    if "\n" in said:
        return f"{working}\nThe answer is:\n{said}"
    return f"{working}\nThe answer is {said}"


# -- code ------------------------------------------------------------------------------------------
def _signature_end(lines: list[str], start: int) -> int:
    for j in range(start, len(lines)):
        if lines[j].split("#")[0].rstrip().endswith(":"):
            return j
    return start


def stub_program(code: str) -> str:
    """``code`` up to and including its first top-level ``def`` signature, with a body returning None."""
    lines = code.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("def ") or line.startswith("async def "):
            end = _signature_end(lines, i)
            return "\n".join(lines[: end + 1] + ["    return None"])
    return "def solution(*args, **kwargs):\n    return None"


def draft_code(ctx: RequestContext, entry: dict, correct: bool, index: int) -> str:
    ref = reference_text(entry.get("answer")) or ""
    text = entry.get("text") or ""
    has_def = re.search(r"^(async )?def ", ref, re.MULTILINE) is not None
    # A body-only reference (HumanEval's canonical_solution) completes the prompt's signature.
    program = ref if has_def or "def " not in text else text.rstrip("\n") + "\n" + ref
    if not correct:
        program = stub_program(program if ("def " in program) else text)
    return f"Here is the implementation:\n```python\n{program.rstrip()}\n```"


# -- anything else ---------------------------------------------------------------------------------
GENERIC_LINES = (
    "Here is a short, direct answer to the question.",
    "In brief: it depends on the details, but the main point is clear.",
    "My answer, in one sentence: the question has a straightforward resolution.",
)


def generic_text(ctx: RequestContext, index: int = 0) -> str:
    return ctx.choose("generic", GENERIC_LINES, index)


def draft_unknown(ctx: RequestContext, index: int) -> str:
    """The reply to a prompt no answer-key entry matches: a letter when the prompt lists lettered
    options, otherwise a fixed sentence."""
    letters = _OPTION_LINE.findall(ctx.prompt)
    if letters:
        k = LETTERS.index(max(letters)) + 1
        return f"Answer: {LETTERS[int(ctx.draw('guess', index) * k)]}"
    return "I do not have enough information to answer that with confidence."


def draft_placeholder(ctx: RequestContext, entry: dict, correct: bool, index: int) -> str:
    """Judge items are answered by the ``judge`` behaviour; this is what remains if it is replaced."""
    return generic_text(ctx, index)


DRAFTERS: dict[str, Drafter] = {
    "mcq_single": draft_mcq_single,
    "mcq_multi": draft_mcq_multi,
    "freeform": draft_freeform,
    "code": draft_code,
    "judge_pairwise": draft_placeholder,
}
