"""Plain-Python references for every kernel in this package: slow, obvious, and the definition of correct.

Tests check each kernel against these on random input; the benchmark times them against the kernels.
"""
from __future__ import annotations

from typing import Sequence

CYRILLIC_FIRST, CYRILLIC_LAST = 0x0400, 0x04FF


def ngram_repeats_quadratic(text: str, n: int = 3, threshold: int = 4) -> bool:
    """The upstream definition, as written there: for every position, count its n-gram in the whole text."""
    for i in range(len(text) - n + 1):
        if text.count(text[i : i + n]) >= threshold:
            return True
    return False


def ngram_repeats_distinct(text: str, n: int = 3, threshold: int = 4) -> bool:
    """Same definition, each distinct n-gram counted once with ``str.count``."""
    grams = {text[i : i + n] for i in range(len(text) - n + 1)}
    return any(text.count(g) >= threshold for g in grams)


def ngram_first_repeat(text: str, n: int = 3, threshold: int = 4) -> tuple[str | None, int]:
    """Linear Python loop (the Counter-style rewrite, with non-overlapping counts).

    Returns the first n-gram, scanning left to right, whose non-overlapping count reaches ``threshold``,
    with ``text.count`` of it; ``(None, 0)`` when there is none.
    """
    last_end: dict[str, int] = {}
    counts: dict[str, int] = {}
    for i in range(len(text) - n + 1):
        gram = text[i : i + n]
        if i >= last_end.get(gram, 0):
            counts[gram] = counts.get(gram, 0) + 1
            last_end[gram] = i + n
            if counts[gram] >= threshold:
                return gram, text.count(gram)
    return None, 0


def ngram_repeats_counter(text: str, n: int = 3, threshold: int = 4) -> bool:
    """Boolean form of ``ngram_first_repeat``: the per-character Python loop the kernel replaces."""
    return ngram_first_repeat(text, n, threshold)[0] is not None


def has_cyrillic(text: str) -> bool:
    """Any code point in U+0400..U+04FF (the vendor verifier's rule)."""
    return any(CYRILLIC_FIRST <= ord(ch) <= CYRILLIC_LAST for ch in text)


def script_counts(text: str, columns: Sequence[str], script_of) -> list[int]:
    """Code points per script of ``text``; scripts not in ``columns`` go to the column named "Other".

    ``script_of`` maps a one-character ``str`` to its Unicode script name (``unicodedataplus.script``).
    """
    index = {name: k for k, name in enumerate(columns)}
    out = [0] * len(columns)
    for ch in text:
        name = script_of(ch)
        out[index[name] if name in index else index["Other"]] += 1
    return out
