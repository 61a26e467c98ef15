"""Unicode scripts per code point, counted over whole result sets (numba).

The script of every code point comes from Unicode's own data (Scripts.txt) through the ``unicodedataplus``
package, never from a hand-written range list. At first use the module asks ``unicodedataplus.script`` for
all 0x110000 code points once (about 0.2 s) and keeps the answer as a ``uint8`` lookup array, cached on disk
under ``$EVAL752_CACHE_DIR`` (default ``~/.cache/eval752``) in a file named after the package version and its
Unicode version, so a package upgrade builds a new table. A cache that cannot be written only costs the
rebuild. Script names are Unicode's long names ("Latin", "Han", "Common", "Inherited", "Unknown", ...).
"""
from __future__ import annotations

import difflib
import functools
import logging
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from numba import njit, prange

from .columnar import TextBatch, blocks, chunk_bounds, dynamic_schedule
from .reference import CYRILLIC_FIRST, CYRILLIC_LAST

log = logging.getLogger(__name__)

TABLE_SIZE = 0x110000
#: The columns of ``script_counts`` by default; every other script is counted under "Other".
DEFAULT_SCRIPTS: tuple[str, ...] = (
    "Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Thai", "Hangul", "Hiragana", "Katakana",
    "Han", "Common", "Inherited",
)
OTHER = "Other"


def cache_dir() -> Path:
    """Where eval752 keeps derived data: ``$EVAL752_CACHE_DIR`` or ``~/.cache/eval752``."""
    env = os.environ.get("EVAL752_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "eval752"


def unicode_source() -> tuple[str, str, str]:
    """(package name, package version, Unicode version) of the script data in use."""
    import unicodedataplus

    return "unicodedataplus", metadata.version("unicodedataplus"), unicodedataplus.unidata_version


def load_or_build(name: str, build) -> dict[str, np.ndarray]:
    """Arrays saved under ``cache_dir()/name`` (an ``.npz``), built with ``build()`` when absent or unreadable."""
    path = cache_dir() / name
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, KeyError):
        pass
    arrays = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)  # atomic: concurrent builders never see half a file
    except OSError as exc:
        log.warning("could not cache %s: %s", path, exc)
    return arrays


def _build_table() -> dict[str, np.ndarray]:
    import unicodedataplus

    per_codepoint = [unicodedataplus.script(chr(cp)) for cp in range(TABLE_SIZE)]
    names = sorted(set(per_codepoint))
    if len(names) > 255:
        raise RuntimeError(f"{len(names)} scripts do not fit the uint8 table")
    index = {n: k for k, n in enumerate(names)}
    table = np.fromiter(map(index.__getitem__, per_codepoint), dtype=np.uint8, count=TABLE_SIZE)
    return {"table": table, "names": np.array(names)}


@functools.lru_cache(maxsize=1)
def script_table() -> tuple[np.ndarray, tuple[str, ...]]:
    """(``uint8`` script id of every code point, script names by id)."""
    package, version, unicode_version = unicode_source()
    data = load_or_build(f"scripts-{package}-{version}-unicode-{unicode_version}.npz", _build_table)
    table, names = data["table"], tuple(str(n) for n in data["names"])
    if table.shape != (TABLE_SIZE,) or table.dtype != np.uint8 or int(table.max()) >= len(names):
        raise RuntimeError(f"corrupt script table in {cache_dir()}; delete it to rebuild")
    return table, names


def all_scripts() -> tuple[str, ...]:
    """Every script name the Unicode data knows (including "Common", "Inherited" and "Unknown")."""
    return script_table()[1]


def resolve_script(name: str) -> str:
    """The canonical script name for ``name`` (case-insensitive), or ValueError with the nearest names."""
    names = all_scripts()
    by_lower = {n.lower(): n for n in names}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    near = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise ValueError(f"unknown Unicode script {name!r}{hint}")


@functools.lru_cache(maxsize=16)
def column_table(columns: tuple[str, ...]) -> np.ndarray:
    """``uint8`` column of every code point for ``columns`` (a script name each; "Other" takes the rest)."""
    table, names = script_table()
    other = columns.index(OTHER) if OTHER in columns else -1
    remap = np.full(len(names), other, dtype=np.int64)
    for k, col in enumerate(columns):
        if col != OTHER:
            remap[names.index(col)] = k
    if (remap < 0).any():
        raise ValueError("columns must include 'Other' unless they name every script")
    return remap.astype(np.uint8)[table]


# Outputs are allocated by the caller: an array expression inside a parallel function becomes a parallel
# loop of its own, which the one-iteration chunks of dynamic_schedule() would make very slow.
@njit(cache=True, parallel=True)
def _count_columns(cps, offsets, bounds, coltable, out):
    for c in prange(bounds.shape[0] - 1):
        for t in range(bounds[c], bounds[c + 1]):
            for k in range(offsets[t], offsets[t + 1]):
                out[t, coltable[cps[k]]] += 1


def count_columns(texts: TextBatch, coltable: np.ndarray, ncols: int) -> np.ndarray:
    """int64 ``(len(texts), ncols)``: per text, code points per column of ``coltable`` (a uint8 per code point)."""
    parts = [np.zeros((0, ncols), dtype=np.int64)]
    for _, _, enc in blocks(texts):
        with dynamic_schedule():
            out = np.zeros((enc.n_texts, ncols), dtype=np.int64)
            _count_columns(enc.codepoints, enc.offsets, chunk_bounds(enc.offsets), coltable, out)
            parts.append(out)
    return np.concatenate(parts)


def script_columns(scripts: Iterable[str] | str | None = None) -> tuple[str, ...]:
    """The column names ``script_counts`` uses for ``scripts`` (None: the defaults, "all": every script)."""
    if scripts is None:
        return DEFAULT_SCRIPTS + (OTHER,)
    if isinstance(scripts, str):
        if scripts != "all":
            raise ValueError("scripts must be None, 'all' or a list of script names")
        return all_scripts()
    chosen = tuple(dict.fromkeys(resolve_script(s) for s in scripts if s != OTHER))
    return chosen if set(chosen) >= set(all_scripts()) else chosen + (OTHER,)


def script_counts(texts: TextBatch, scripts: Sequence[str] | str | None = None) -> tuple[np.ndarray, list[str]]:
    """Code points per Unicode script for every text, all scripts in one pass.

    Returns ``(counts, names)``: ``counts`` is int64 of shape ``(len(texts), len(names))``. By default the
    columns are ``DEFAULT_SCRIPTS`` plus "Other" (every other script, unassigned code points and
    surrogates); ``scripts="all"`` gives one column per Unicode script (no "Other"); a list of script names
    gives those plus "Other". Each row sums to the text's length in code points. The result holds
    ``len(texts) * len(names)`` int64 values: pass very large sets in slices when asking for "all".
    """
    names = script_columns(scripts)
    return count_columns(texts, column_table(names), len(names)), list(names)


@njit(cache=True, parallel=True)
def _has_range(cps, offsets, bounds, lo, hi, out):
    for c in prange(bounds.shape[0] - 1):
        for t in range(bounds[c], bounds[c + 1]):
            for k in range(offsets[t], offsets[t + 1]):
                if lo <= cps[k] <= hi:
                    out[t] = True
                    break


def has_cyrillic(texts: TextBatch) -> np.ndarray:
    """Bool array: does the text hold a code point in U+0400..U+04FF (the vendor verifier's exact rule)?"""
    lo, hi = np.uint32(CYRILLIC_FIRST), np.uint32(CYRILLIC_LAST)
    parts = [np.zeros(0, dtype=np.bool_)]
    for _, _, enc in blocks(texts):
        with dynamic_schedule():
            out = np.zeros(enc.n_texts, dtype=np.bool_)
            _has_range(enc.codepoints, enc.offsets, chunk_bounds(enc.offsets), lo, hi, out)
            parts.append(out)
    return np.concatenate(parts)
