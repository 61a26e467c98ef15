"""Repeated n-gram detection over whole result sets (numba).

The rule, on code points: a text *repeats* when some substring of ``n`` code points occurs at least
``threshold`` times, counted the way ``str.count`` counts, that is without overlap, left to right:
``"aaaaaa".count("aaa") == 2``. This is the upstream check ``any(text.count(text[i:i+n]) >= threshold)``
(quadratic) computed in one pass.

How: one left-to-right pass over the n-gram positions with an open-addressing hash table (reused across the
texts of a chunk, emptied slot by slot). For each distinct n-gram the table keeps where its last counted
occurrence ends and its count; an occurrence at position ``i`` counts only when ``i`` is at or past that
end, which is exactly ``str.count``'s greedy scan for that n-gram. Keys: for ``n <= 3`` the n-gram itself
packed into 64 bits (21 bits per code point), so equal keys are equal n-grams; for ``n > 3`` a polynomial rolling hash, and equal hashes are confirmed by
comparing the code points with the entry's last counted occurrence, so a collision never changes a result.
Cost is linear in the text length for ``n <= 3``; for larger ``n`` each repeated n-gram occurrence also
costs ``n`` comparisons. A text is left as soon as its answer is known; for ``str`` input, long texts are
first scanned on a prefix so that early repeats need not encode the whole text.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .columnar import Encoded, TextBatch, blocks, chunk_bounds, decode_span, dynamic_schedule

_FIB = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: multiplicative hashing into the table
_BASE = np.uint64(0x100000001B3)  # odd base of the rolling polynomial hash (mod 2**64)
_PACK_BITS = np.uint64(21)  # every code point fits in 21 bits
PREFIX = 1024  # code points (at least 4 n) scanned first in long str texts (see ngram_scan)


@njit(cache=True, inline="always")
def _same(cps, a, b, n):
    for j in range(n):
        if cps[a + j] != cps[b + j]:
            return False
    return True


@njit(cache=True)
def _scan_text(cps, start, stop, n, threshold, full_count, table, touched):
    """(position where the reported n-gram reached ``threshold`` or -1, its count) for ``cps[start:stop]``.

    ``table`` holds two words per slot: the key, and ``end << 32 | count`` (count 0: empty slot), so one
    probe touches one cache line. The slots used are listed in ``touched`` and emptied before returning.
    """
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
    one = np.uint64(1)
    low = np.uint64(0xFFFFFFFF)
    key = np.uint64(0)
    top = one  # _BASE ** (n - 1): weight of the code point that leaves the window
    keep = np.uint64(0)
    if exact:
        keep = (one << (_PACK_BITS * np.uint64(n))) - one
        for j in range(n - 1):
            key = (key << _PACK_BITS) | np.uint64(cps[start + j])
    else:
        for j in range(n - 1):
            key = key * _BASE + np.uint64(cps[start + j])
            top = top * _BASE
    used = 0
    at = -1
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
        if at >= 0:
            # the reported n-gram is known: finish its count (full_count mode only)
            if key == found_key and i >= found_end and (exact or _same(cps, start + at, start + i, n)):
                found_count += 1
                found_end = i + n
            continue
        slot = np.int64((key * _FIB) >> shift)
        count = 0
        end = 0
        while True:
            meta = table[2 * slot + 1]
            if meta == 0:
                touched[used] = slot
                used += 1
                table[2 * slot] = key
                count = 1
                end = i + n
                break
            end = np.int64(meta >> np.uint64(32))
            # an equal key is an equal n-gram for n <= 3; else compare with its last counted occurrence
            if table[2 * slot] == key and (exact or _same(cps, start + end - n, start + i, n)):
                count = np.int64(meta & low)
                if i >= end:
                    count += 1
                    end = i + n
                break
            slot = (slot + 1) & mask
        table[2 * slot + 1] = (np.uint64(end) << np.uint64(32)) | np.uint64(count)
        if count >= threshold:
            at = i
            found_key = key
            found_count = count
            found_end = end
            if not full_count:
                break
    for k in range(used):
        table[2 * touched[k] + 1] = 0
    return at, found_count


@njit(cache=True, parallel=True)
def _ngram_scan(cps, offsets, bounds, n, threshold, full_count, at, count):
    # at and count come from the caller: an array expression here would become a parallel loop of its own
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
        table = np.zeros(2 * size, dtype=np.uint64)  # one workspace per chunk, left empty after each text
        touched = np.empty(longest, dtype=np.int64)
        for t in range(lo, hi):
            a, k = _scan_text(cps, offsets[t], offsets[t + 1], n, threshold, full_count, table, touched)
            at[t] = a
            count[t] = k


def _check_params(n: int, threshold: int) -> tuple[int, int]:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(threshold, bool) or int(threshold) != threshold or threshold < 1:
        raise ValueError(f"threshold must be an integer >= 1, got {threshold!r}")
    return int(n), int(threshold)


def ngram_scan(texts: TextBatch, n: int = 3, threshold: int = 4, *, full_count: bool = False):
    """Columnar result: ``(at, count)`` int64 arrays, one entry per text.

    The reported n-gram of a text is the first one, scanning left to right, whose non-overlapping count
    reaches ``threshold``. ``at[i]`` is the position (in code points, within text ``i``) of the occurrence
    that reached it, so the n-gram is ``text[at:at + n]``; -1 when the text does not repeat. ``count[i]`` is
    ``threshold`` then, or with ``full_count=True`` the n-gram's non-overlapping count over the whole text
    (``text.count(ngram)``); 0 when none.
    """
    n, threshold = _check_params(n, threshold)
    if isinstance(texts, Encoded):
        return _scan_blocks(texts, n, threshold, bool(full_count))
    texts = list(texts)
    at = np.full(len(texts), -1, dtype=np.int64)
    count = np.zeros(len(texts), dtype=np.int64)
    # Prefix pass: the greedy count over a prefix equals the full count's first matches, so a repeat found
    # in the first PREFIX code points is the text's answer, and most repeating texts are decided there
    # without encoding the rest. The other long texts are then scanned whole.
    cut = max(PREFIX, 4 * n)
    long = [i for i, t in enumerate(texts) if len(t) > 2 * cut]
    rest = np.ones(len(texts), dtype=bool)
    if long:
        pre_at, _ = _scan_blocks([texts[i][:cut] for i in long], n, threshold, False)
        hit = np.asarray(long, dtype=np.int64)[pre_at >= 0]
        at[hit] = pre_at[pre_at >= 0]
        count[hit] = threshold
        rest[hit] = False
    todo = np.flatnonzero(rest)
    if todo.size:
        sub_at, sub_count = _scan_blocks([texts[i] for i in todo.tolist()], n, threshold, False)
        at[todo], count[todo] = sub_at, sub_count
    if full_count:
        for i in np.flatnonzero(at >= 0).tolist():
            f = int(at[i])
            count[i] = texts[i].count(texts[i][f : f + n])  # str.count is the non-overlapping count
    return at, count


def _scan_blocks(texts: TextBatch, n: int, threshold: int, full_count: bool):
    ats, counts = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for _, _, enc in blocks(texts):
        at = np.full(enc.n_texts, -1, dtype=np.int64)
        count = np.zeros(enc.n_texts, dtype=np.int64)
        with dynamic_schedule():
            _ngram_scan(enc.codepoints, enc.offsets, chunk_bounds(enc.offsets), n, threshold, full_count, at, count)
        ats.append(at)
        counts.append(count)
    return np.concatenate(ats), np.concatenate(counts)


def ngram_repeats(texts: TextBatch, n: int = 3, threshold: int = 4) -> np.ndarray:
    """Bool array: does some n-gram of code points occur >= ``threshold`` times (``str.count`` semantics)?

    Empty texts and texts shorter than ``n`` give False. ``texts`` is a sequence of ``str`` or an ``Encoded``
    batch from ``encode``.
    """
    at, _ = ngram_scan(texts, n, threshold)
    return at >= 0


def ngram_repeat_details(texts: TextBatch, n: int = 3, threshold: int = 4) -> list[tuple[str | None, int]]:
    """For each text ``(ngram, count)`` or ``(None, 0)``.

    ``ngram`` is the first n-gram, scanning left to right, whose non-overlapping count reaches ``threshold``
    (the one whose ``threshold``-th counted occurrence ends earliest); ``count`` is ``text.count(ngram)`` over
    the whole text, so ``count >= threshold``.
    """
    if not isinstance(texts, Encoded):
        texts = list(texts)
    at, count = ngram_scan(texts, n, threshold, full_count=True)
    out: list[tuple[str | None, int]] = []
    for i, (f, k) in enumerate(zip(at.tolist(), count.tolist())):
        if f < 0:
            out.append((None, 0))
        elif isinstance(texts, Encoded):
            start = int(texts.offsets[i]) + f
            out.append((decode_span(texts.codepoints, start, start + n), k))
        else:
            out.append((texts[i][f : f + n], k))
    return out


__all__ = ["ngram_scan", "ngram_repeats", "ngram_repeat_details"]
