"""Columnar text: a whole batch of texts as one array of code points plus an offsets array.

Text ``i`` is ``codepoints[offsets[i]:offsets[i + 1]]``. Building the columns takes no Python loop per
character: the texts are joined, encoded once as UTF-32-LE and viewed as ``uint32`` with ``numpy.frombuffer``;
the offsets are the cumulative text lengths (``len`` of a ``str`` counts code points). Lone surrogates, which
a ``str`` may hold (for example from JSON ``"\\ud800"``), are kept as their own code point values.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence, Union

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


def encode(texts: Sequence[str]) -> Encoded:
    """Columnar form of ``texts``: ``(codepoints uint32, offsets int64 of len(texts) + 1)``."""
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of texts, not a single str")
    if not isinstance(texts, (list, tuple)):
        texts = list(texts)
    count = len(texts)
    offsets = np.zeros(count + 1, dtype=np.int64)
    if count:
        np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=count), out=offsets[1:])
    raw = "".join(texts).encode("utf-32-le", "surrogatepass")
    codepoints = np.frombuffer(raw, dtype=np.dtype("<u4")).astype(np.uint32, copy=False)
    return Encoded(codepoints, offsets)


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


def chunk_bounds(offsets: np.ndarray, per_thread: int = 4) -> np.ndarray:
    """Split the texts into contiguous chunks holding about the same number of code points.

    Kernels run ``prange`` over these chunks; numba hands each thread a contiguous block of iterations, so
    equal-sized chunks (a few per thread) keep both cores busy even when a few texts are very long.
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
