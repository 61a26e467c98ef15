"""Numba kernels that scan whole result sets at once, each with a plain-Python reference in ``reference``.

Input is columnar (``encode``): all texts as one ``uint32`` array of code points plus an ``int64`` offsets
array, so one call covers a whole batch with no Python loop per character. Every public kernel takes either
a sequence of ``str`` or an ``Encoded`` batch (encode once, run several kernels). Semantics are on code
points, never bytes.

Compilation: kernels are ``@njit(cache=True)`` and the batch kernels ``parallel=True`` (``prange`` over
chunks of texts of about equal size, so all cores work). The first call in a fresh environment compiles
(a few seconds in total); later processes load the machine code from numba's cache. Numba writes that cache
next to this package (``__pycache__``) or, when that is not writable, in a per-user directory; set
``NUMBA_CACHE_DIR`` to choose the place (numba reads it natively), and ``NUMBA_NUM_THREADS`` to cap
threads. On a machine shared with other busy processes, ``OMP_WAIT_POLICY=passive`` (or
``NUMBA_THREADING_LAYER=workqueue``) stops idle OpenMP workers from spinning on the cores others need. Derived Unicode data (the script table) is cached under ``$EVAL752_CACHE_DIR`` (default
``~/.cache/eval752``).
"""
from .columnar import Encoded, decode_span, encode, slice_encoded
from .leak import (
    DEFAULT_ALLOW,
    HAN_NOT_JIS,
    LANGUAGE_SCRIPTS,
    LeakReport,
    detect_leaks,
    infer_expected,
    leak_rate_by_group,
    native_scripts,
)
from .ngram import ngram_repeat_details, ngram_repeats, ngram_scan
from .scripts import DEFAULT_SCRIPTS, all_scripts, cache_dir, has_cyrillic, script_counts

__all__ = [
    "DEFAULT_ALLOW",
    "DEFAULT_SCRIPTS",
    "Encoded",
    "HAN_NOT_JIS",
    "LANGUAGE_SCRIPTS",
    "LeakReport",
    "all_scripts",
    "cache_dir",
    "decode_span",
    "detect_leaks",
    "encode",
    "has_cyrillic",
    "infer_expected",
    "leak_rate_by_group",
    "native_scripts",
    "ngram_repeat_details",
    "ngram_repeats",
    "ngram_scan",
    "script_counts",
    "slice_encoded",
]
