"""Repeated n-gram detection over whole result sets (numba).

The rule, on code points: a text *repeats* when some substring of ``n`` code points occurs at least
``threshold`` times, counted the way ``str.count`` counts, that is without overlap, left to right:
``"aaaaaa".count("aaa") == 2``. This is the upstream check ``any(text.count(text[i:i+n]) >= threshold)``
(quadratic) computed in one pass.

How: one left-to-right pass over the n-gram positions with an open-addressing hash table per text. For each
distinct n-gram the table keeps where its last counted occurrence ends and its count; an occurrence at
position ``i`` counts only when ``i`` is at or past that end, which is exactly ``str.count``'s greedy scan
for that n-gram. Keys: for ``n <= 3`` the n-gram itself packed into 64 bits (21 bits per code point), so
equal keys are equal n-grams; for ``n > 3`` a polynomial rolling hash, and equal hashes are confirmed by
comparing the code points, so a hash collision never changes a result. Cost is linear in the text length
for ``n <= 3``; for larger ``n`` each repeated n-gram occurrence also costs ``n`` comparisons.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .columnar import Encoded, TextBatch, as_encoded, chunk_bounds, decode_span

_FIB = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: multiplicative hashing into the table
_BASE = np.uint64(0x100000001B3)  # odd base of the rolling polynomial hash (mod 2**64)
_PACK_BITS = np.uint64(21)  # every code point fits in 21 bits


@njit(cache=True, inline="always")
def _same(cps, a, b, n):
    for j in range(n):
        if cps[a + j] != cps[b + j]:
            return False
    return True


@njit(cache=True)
def _scan_text(cps, start, stop, n, threshold, full_count, stamp_id, keys, stamps, ends, counts, firsts):
    """(first position of the reported n-gram or -1, its count) for ``cps[start:stop]``."""
    positions = stop - start - n + 1
    if positions <= 0:
        return -1, 0
    exact = n <= 3
    size = 2
    bits = 1
    while size < 2 * positions:
        size *= 2
        bits += 1
    mask = size - 1
    shift = np.uint64(64 - bits)
    key = np.uint64(0)
    top = np.uint64(1)  # _BASE ** (n - 1): weight of the code point that leaves the window
    keep = np.uint64(0)
    if exact:
        keep = (np.uint64(1) << (_PACK_BITS * np.uint64(n))) - np.uint64(1)
        for j in range(n - 1):
            key = (key << _PACK_BITS) | np.uint64(cps[start + j])
    else:
        for j in range(n - 1):
            key = key * _BASE + np.uint64(cps[start + j])
            top = top * _BASE
    found_first = -1
    found_key = np.uint64(0)
    found_count = 0
    found_end = 0
    for i in range(positions):
        incoming = np.uint64(cps[start + i + n - 1])
        if exact:
            key = ((key << _PACK_BITS) | incoming) & keep
        else:
            if i > 0:
                key = key - np.uint64(cps[start + i - 1]) * top
            key = key * _BASE + incoming
        if found_first >= 0:
            # the reported n-gram is known: finish its count (full_count mode only)
            if key == found_key and i >= found_end and (exact or _same(cps, start + found_first, start + i, n)):
                found_count += 1
                found_end = i + n
            continue
        slot = np.int64((key * _FIB) >> shift)
        while True:
            if stamps[slot] != stamp_id:
                stamps[slot] = stamp_id
                keys[slot] = key
                firsts[slot] = i
                counts[slot] = 1
                ends[slot] = i + n
                break
            if keys[slot] == key and (exact or _same(cps, start + firsts[slot], start + i, n)):
                if i >= ends[slot]:
                    counts[slot] += 1
                    ends[slot] = i + n
                break
            slot = (slot + 1) & mask
        if counts[slot] >= threshold:
            if not full_count:
                return firsts[slot], counts[slot]
            found_first = firsts[slot]
            found_key = key
            found_count = counts[slot]
            found_end = ends[slot]
    return found_first, found_count


@njit(cache=True, parallel=True)
def _ngram_scan(cps, offsets, bounds, n, threshold, full_count):
    ntexts = offsets.shape[0] - 1
    first = np.full(ntexts, -1, dtype=np.int64)
    count = np.zeros(ntexts, dtype=np.int64)
    for c in prange(bounds.shape[0] - 1):
        lo = bounds[c]
        hi = bounds[c + 1]
        longest = 0
        for t in range(lo, hi):
            longest = max(longest, offsets[t + 1] - offsets[t] - n + 1)
        if longest <= 0:
            continue
        size = 2
        while size < 2 * longest:
            size *= 2
        # one workspace per chunk; a slot belongs to text t only while stamps[slot] == t
        keys = np.empty(size, dtype=np.uint64)
        stamps = np.full(size, -1, dtype=np.int64)
        ends = np.empty(size, dtype=np.int64)
        counts = np.empty(size, dtype=np.int64)
        firsts = np.empty(size, dtype=np.int64)
        for t in range(lo, hi):
            f, k = _scan_text(
                cps, offsets[t], offsets[t + 1], n, threshold, full_count, t, keys, stamps, ends, counts, firsts
            )
            first[t] = f
            count[t] = k
    return first, count


def _check_params(n: int, threshold: int) -> tuple[int, int]:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(threshold, bool) or int(threshold) != threshold or threshold < 1:
        raise ValueError(f"threshold must be an integer >= 1, got {threshold!r}")
    return int(n), int(threshold)


def ngram_scan(texts: TextBatch, n: int = 3, threshold: int = 4, *, full_count: bool = False):
    """Columnar result: ``(first, count)`` int64 arrays, one entry per text.

    ``first[i]`` is the position (in code points) of the first occurrence of the reported n-gram of text
    ``i``, or -1 when the text does not repeat. The reported n-gram is the first one, scanning left to right,
    whose non-overlapping count reaches ``threshold``. ``count[i]`` is ``threshold`` at that moment, or with
    ``full_count=True`` its non-overlapping count over the whole text (``text.count(ngram)``); 0 when none.
    """
    n, threshold = _check_params(n, threshold)
    enc = as_encoded(texts)
    return _ngram_scan(enc.codepoints, enc.offsets, chunk_bounds(enc.offsets), n, threshold, bool(full_count))


def ngram_repeats(texts: TextBatch, n: int = 3, threshold: int = 4) -> np.ndarray:
    """Bool array: does some n-gram of code points occur >= ``threshold`` times (``str.count`` semantics)?

    Empty texts and texts shorter than ``n`` give False. ``texts`` is a sequence of ``str`` or an ``Encoded``
    batch from ``encode``.
    """
    first, _ = ngram_scan(texts, n, threshold)
    return first >= 0


def ngram_repeat_details(texts: TextBatch, n: int = 3, threshold: int = 4) -> list[tuple[str | None, int]]:
    """For each text ``(ngram, count)`` or ``(None, 0)``.

    ``ngram`` is the first n-gram, scanning left to right, whose non-overlapping count reaches ``threshold``
    (the one whose ``threshold``-th counted occurrence ends earliest); ``count`` is ``text.count(ngram)`` over
    the whole text, so ``count >= threshold``.
    """
    enc = as_encoded(texts)
    first, count = ngram_scan(enc, n, threshold, full_count=True)
    out: list[tuple[str | None, int]] = []
    for i in range(first.shape[0]):
        f = int(first[i])
        if f < 0:
            out.append((None, 0))
        else:
            start = int(enc.offsets[i]) + f
            out.append((decode_span(enc.codepoints, start, start + n), int(count[i])))
    return out


__all__ = ["ngram_scan", "ngram_repeats", "ngram_repeat_details", "Encoded"]
