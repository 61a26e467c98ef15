"""Batch text scans used by the verifier's text validators.

Both scans run over a whole list of texts in one call. With ``backend="auto"`` they use the numba kernels
of ``eval752.kernels`` (``has_cyrillic`` and ``ngram_repeats``) when that package exports them, and the
plain-Python scans below otherwise; ``"kernels"`` insists on the kernels, ``"python"`` never uses them.
Semantics are identical on code points:

* Cyrillic: some code point in U+0400..U+04FF (the Cyrillic block only; U+0500 Cyrillic Supplement is not
  counted, as upstream).
* n-gram repetition: some substring of ``n`` code points occurs ``threshold`` or more times, counted
  without overlap as ``str.count`` does (so ``"aaaaaa"`` holds ``"aaa"`` twice, not four times).
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

import numpy as np

BACKENDS = ("auto", "kernels", "python")
CYRILLIC_FIRST = 0x0400
CYRILLIC_LAST = 0x04FF


def _python_has_cyrillic(texts: Sequence[str]) -> np.ndarray:
    out = np.zeros(len(texts), dtype=np.bool_)
    for i, text in enumerate(texts):
        out[i] = any(CYRILLIC_FIRST <= ord(ch) <= CYRILLIC_LAST for ch in text)
    return out


def _repeats(text: str, n: int, threshold: int) -> bool:
    if len(text) < n:
        return False
    # An overlapping count bounds the non-overlapping one from above, so it only narrows the candidates.
    windows = Counter(text[i : i + n] for i in range(len(text) - n + 1))
    return any(c >= threshold and text.count(g) >= threshold for g, c in windows.items())


def _python_ngram_repeats(texts: Sequence[str], n: int, threshold: int) -> np.ndarray:
    out = np.zeros(len(texts), dtype=np.bool_)
    for i, text in enumerate(texts):
        out[i] = _repeats(text, n, threshold)
    return out


def _kernels() -> tuple[Callable, Callable] | None:
    try:
        from ..kernels import has_cyrillic, ngram_repeats  # lazy: numba compiles on first use
    except ImportError:
        return None
    return has_cyrillic, ngram_repeats


def resolve_backend(backend: str = "auto") -> str:
    """The backend that will actually run: ``"kernels"`` or ``"python"``."""
    if backend not in BACKENDS:
        raise ValueError(f"text backend must be one of {BACKENDS}, not {backend!r}")
    if backend == "python":
        return "python"
    if _kernels() is None:
        if backend == "kernels":
            raise ImportError("eval752.kernels does not export has_cyrillic and ngram_repeats")
        return "python"
    return "kernels"


def has_cyrillic(texts: Sequence[str], backend: str = "auto") -> np.ndarray:
    texts = list(texts)
    if not texts:
        return np.zeros(0, dtype=np.bool_)
    if resolve_backend(backend) == "kernels":
        kernel = _kernels()[0]  # type: ignore[index]
        return np.asarray(kernel(texts), dtype=np.bool_)
    return _python_has_cyrillic(texts)


def ngram_repeats(texts: Sequence[str], n: int = 3, threshold: int = 4, backend: str = "auto") -> np.ndarray:
    if n < 1 or threshold < 1:
        raise ValueError(f"n-gram repetition needs n >= 1 and threshold >= 1 (got n={n}, threshold={threshold})")
    texts = list(texts)
    if not texts:
        return np.zeros(0, dtype=np.bool_)
    if resolve_backend(backend) == "kernels":
        kernel = _kernels()[1]  # type: ignore[index]
        return np.asarray(kernel(texts, n=n, threshold=threshold), dtype=np.bool_)
    return _python_ngram_repeats(texts, n, threshold)
