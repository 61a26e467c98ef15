"""Columnar text: a whole batch of texts as one array of code points plus an offsets array.

Text ``i`` is ``codepoints[offsets[i]:offsets[i + 1]]``. Building the columns takes no Python loop per
character: the texts are joined once and the joined ``str`` is turned into ``uint32`` code points by C code
(``str.encode`` plus ``numpy.frombuffer``: ASCII bytes when the text is ASCII, UTF-16 units when nothing lies
above U+FFFF, which is then one unit per code point, else numpy's UCS-4 copy of the ``str``; all three are
faster than the utf-32 codec); the offsets are the cumulative text lengths (``len`` counts code points).
Lone surrogates, which a ``str`` may hold (for example from JSON ``"\\ud800"``), are kept as their own code
point values.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple, Sequence, Union

import numba
import numpy as np

MAX_CODEPOINT = 0x10FFFF


class Encoded(NamedTuple):
    """A batch of texts in columnar form (unpacks as ``codepoints, offsets``)."""

    codepoints: np.ndarray  # uint32, every code point of every text, one after another
    offsets: np.ndarray  # int64, len(texts) + 1 entries, offsets[0] == 0

    @property
    def n_texts(self) -> int:
        """Number of texts (``len()`` stays the tuple's length, 2)."""
        return int(self.offsets.shape[0]) - 1

    def text(self, i: int) -> str:
        """Text ``i`` decoded back into a ``str``."""
        return decode_span(self.codepoints, int(self.offsets[i]), int(self.offsets[i + 1]))


TextBatch = Union[Sequence[str], Encoded]


def _fill(out: np.ndarray, texts: Sequence[str], total: int) -> None:
    """Write the code points of ``texts`` (``total`` of them) into ``out``."""
    joined = "".join(texts)
    if total == 0:
        return
    if joined.isascii():  # one byte per code point
        out[:] = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        return
    raw = joined.encode("utf-16-le", "surrogatepass")
    if len(raw) == 2 * total:  # nothing above U+FFFF: every UTF-16 unit is one code point
        out[:] = np.frombuffer(raw, dtype=np.dtype("<u2"))
    else:  # astral code points: numpy copies the str as UCS-4 (faster than the utf-32 codec)
        out[:] = np.array(joined).reshape(1).view(np.uint32)


def _encode_known(texts: Sequence[str], lengths: np.ndarray, block: int = 1 << 16) -> Encoded:
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    codepoints = np.empty(int(offsets[-1]), dtype=np.uint32)
    first = 0
    while first < len(texts):  # 64K code points at a time: the temporaries stay in cache
        stop = min(len(texts), max(first + 1, int(np.searchsorted(offsets, offsets[first] + block, "right")) - 1))
        _fill(codepoints[offsets[first] : offsets[stop]], texts[first:stop], int(offsets[stop] - offsets[first]))
        first = stop
    return Encoded(codepoints, offsets)


def _as_list(texts: Sequence[str]) -> Sequence[str]:
    if isinstance(texts, str):
        raise TypeError("expected a sequence of texts, not a single str")
    return texts if isinstance(texts, (list, tuple)) else list(texts)


def _lengths(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))


def encode(texts: Sequence[str]) -> Encoded:
    """Columnar form of ``texts``: ``(codepoints uint32, offsets int64 of len(texts) + 1)``."""
    texts = _as_list(texts)
    return _encode_known(texts, _lengths(texts))


#: Code points per kernel call when kernels encode ``str`` input themselves (64 MiB of uint32): bounds the
#: memory of huge batches while keeping the number of parallel regions low. Each region costs a thread
#: wake-up, which on a machine crowded with other processes can take milliseconds.
BLOCK_CODEPOINTS = 1 << 24


def blocks(
    texts: TextBatch, size: int | None = None, max_texts: int | None = None
) -> Iterator[tuple[int, int, Encoded]]:
    """``(first, stop, Encoded of texts[first:stop])`` covering ``texts`` in order.

    Each block holds about ``size`` code points (default ``BLOCK_CODEPOINTS``; a longer text is a block of
    its own) and at most ``max_texts`` texts. ``str`` input is encoded block by block; an ``Encoded`` batch
    is sliced (views).
    """
    size = BLOCK_CODEPOINTS if size is None else size
    if isinstance(texts, Encoded):
        count = texts.n_texts
        ends = texts.offsets[1:]
        lengths = None
    else:
        texts = _as_list(texts)
        count = len(texts)
        lengths = _lengths(texts)
        ends = np.cumsum(lengths)
    first = 0
    while first < count:
        base = int(ends[first - 1]) if first else 0
        stop = min(count, max(first + 1, int(np.searchsorted(ends, base + size, side="right"))))
        if max_texts is not None:
            stop = min(stop, first + max_texts)
        if lengths is None:
            yield first, stop, slice_encoded(texts, first, stop)  # type: ignore[arg-type]
        else:
            yield first, stop, _encode_known(texts[first:stop], lengths[first:stop])  # type: ignore[index]
        first = stop


def as_encoded(texts: TextBatch) -> Encoded:
    """``texts`` itself when already columnar, else ``encode(texts)``."""
    return texts if isinstance(texts, Encoded) else encode(texts)


def decode_span(codepoints: np.ndarray, start: int, stop: int) -> str:
    """The ``str`` made of ``codepoints[start:stop]``."""
    return np.ascontiguousarray(codepoints[start:stop], dtype=np.dtype("<u4")).tobytes().decode(
        "utf-32-le", "surrogatepass"
    )


def slice_encoded(enc: Encoded, first: int, stop: int) -> Encoded:
    """Texts ``first..stop-1`` of ``enc`` as their own batch (views, no copy of the code points)."""
    lo, hi = int(enc.offsets[first]), int(enc.offsets[stop])
    return Encoded(enc.codepoints[lo:hi], enc.offsets[first : stop + 1] - lo)


def dynamic_schedule():
    """Context in which ``prange`` loops hand out iterations one at a time (numba's dynamic scheduling)."""
    return numba.parallel_chunksize(1)


def chunk_bounds(offsets: np.ndarray, per_thread: int = 8) -> np.ndarray:
    """Split the texts into contiguous chunks holding about the same number of code points.

    Kernels run ``prange`` over these chunks inside ``dynamic_schedule()``, so a thread that finishes early
    (or one slowed by another process on the machine) takes the next chunk: all cores stay busy even when a
    few texts are very long.
    """
    count = int(offsets.shape[0]) - 1
    if count <= 0:
        return np.zeros(1, dtype=np.int64)
    parts = max(1, min(count, per_thread * numba.get_num_threads()))
    total = int(offsets[-1])
    targets = (np.arange(1, parts, dtype=np.float64) * (total / parts)).astype(np.int64)
    inner = np.searchsorted(offsets[1:], targets, side="left") + 1
    bounds = np.unique(np.concatenate(([0], np.clip(inner, 0, count), [count]))).astype(np.int64)
    return bounds
