"""Language leak detection: answers that mix in a script foreign to the expected language.

Rules (decided here, tested exactly):

- The expectation is a language code (``en``, ``ru``, ``ja``, ``zh``, ``ko``) or a Unicode script name
  (case-insensitive, e.g. ``"Arabic"``), per text or for all texts; or it is inferred from the prompt's
  dominant script (``infer_expected``). A text without an expectation is never flagged.
- Native scripts: en Latin; ru Cyrillic; ja Hiragana, Katakana and Japanese Han; zh Han and Bopomofo;
  ko Hangul; a script name: that script alone.
- Also allowed everywhere (``allow``, default Latin and Greek): Latin because identifiers, code, units and
  product names are written in it in every language; Greek because maths and science use its letters
  (alpha, pi, sigma, mu). Pass ``allow=()`` for a strict check.
- Never counted: Common (digits, punctuation, symbols, emoji, the kana prolonged sound mark),
  Inherited (combining marks) and Unknown (unassigned, private use, surrogates).
- Chinese-only fragments in Japanese: a Han character that neither cp932 (Windows Shift_JIS) nor
  shift_jis_2004 (JIS X 0213, which adds the 2010 joyo kanji such as U+525D) can encode is not Japanese
  Han. Such characters (simplified forms like U+8FD9, U+4EEC) are reported under ``HAN_NOT_JIS`` for
  ``ja``; for every other expectation they are plain "Han".
- A text is flagged when it holds at least ``min_count`` foreign code points in total.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

import numpy as np

from .columnar import Encoded, TextBatch, blocks
from .scripts import count_columns, load_or_build, resolve_script, script_table, unicode_source

LANGUAGE_SCRIPTS: dict[str, tuple[str, ...]] = {
    "en": ("Latin",),
    "ru": ("Cyrillic",),
    "ja": ("Hiragana", "Katakana", "Han"),
    "zh": ("Han", "Bopomofo"),
    "ko": ("Hangul",),
}
DEFAULT_ALLOW: tuple[str, ...] = ("Latin", "Greek")
IGNORED: tuple[str, ...] = ("Common", "Inherited", "Unknown")
HAN_NOT_JIS = "Han_not_JIS"
_BLOCK_TEXTS = 16384  # texts per kernel call: bounds the (texts x scripts) count matrix


def _jis_encodable(ch: str) -> bool:
    for codec in ("cp932", "shift_jis_2004"):
        try:
            ch.encode(codec)
            return True
        except UnicodeEncodeError:
            pass
    return False


@functools.lru_cache(maxsize=1)
def leak_table() -> tuple[np.ndarray, tuple[str, ...]]:
    """Script ids per code point, with Han outside cp932/shift_jis_2004 moved to an extra id ``HAN_NOT_JIS``."""
    table, names = script_table()
    han = names.index("Han")

    def build() -> dict[str, np.ndarray]:
        cps = np.flatnonzero(table == han)
        return {"codepoints": np.array([c for c in cps if not _jis_encodable(chr(c))], dtype=np.int64)}

    _, version, unicode_version = unicode_source()
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    data = load_or_build(f"han-not-jis-python{py}-unicodedataplus-{version}-unicode-{unicode_version}.npz", build)
    out = table.copy()
    out[data["codepoints"]] = len(names)
    return out, names + (HAN_NOT_JIS,)


def native_scripts(expected: str) -> tuple[str, ...]:
    """The scripts native to ``expected`` (a language code of ``LANGUAGE_SCRIPTS`` or a script name)."""
    key = expected.lower()
    if key in LANGUAGE_SCRIPTS:
        return LANGUAGE_SCRIPTS[key]
    try:
        return (resolve_script(expected),)
    except ValueError as exc:
        raise ValueError(f"{exc}; or use a language code: {', '.join(LANGUAGE_SCRIPTS)}") from None


def infer_expected(prompts: TextBatch) -> list[str | None]:
    """Expected language per prompt from its dominant script, None when it has no letters.

    Scores: ja = Han + kana when the prompt has any Hiragana/Katakana; zh = Han otherwise; ko = Hangul;
    ru = Cyrillic; en = Latin; any other script scores its own count and is returned by name. The highest
    score wins; ties go to the earlier of ja, zh, ko, ru, en, then other scripts in alphabetical order.
    """
    table, names = script_table()
    col = {n: k for k, n in enumerate(names)}
    special = {"Han", "Hiragana", "Katakana", "Hangul", "Cyrillic", "Latin", *IGNORED}
    others = [n for n in names if n not in special]
    labels = ["ja", "zh", "ko", "ru", "en", *others]
    out: list[str | None] = []
    for _, _, enc in blocks(prompts, max_texts=_BLOCK_TEXTS):
        counts = count_columns(enc, table, len(names))
        kana = counts[:, col["Hiragana"]] + counts[:, col["Katakana"]]
        han = counts[:, col["Han"]]
        scores = np.column_stack(
            [np.where(kana > 0, kana + han, 0), np.where(kana > 0, 0, han)]
            + [counts[:, col[n]] for n in ("Hangul", "Cyrillic", "Latin", *others)]
        )
        best = scores.argmax(axis=1).tolist()
        has_letters = (scores.max(axis=1) > 0).tolist()
        out.extend(labels[b] if ok else None for b, ok in zip(best, has_letters))
    return out


@dataclass(frozen=True)
class LeakReport:
    """Per text: ``flags[i]``, the foreign scripts with their code point counts, and the expectation used."""

    flags: np.ndarray
    foreign: list[dict[str, int]]
    expected: list[str | None]

    @property
    def rate(self) -> float:
        return float(self.flags.mean()) if self.flags.size else 0.0


def detect_leaks(
    texts: TextBatch,
    expected: str | Sequence[str | None] | None = None,
    *,
    prompts: TextBatch | None = None,
    allow: Iterable[str] = DEFAULT_ALLOW,
    min_count: int = 1,
) -> LeakReport:
    """Flag texts that mix in scripts foreign to the expected language (see the module rules)."""
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1, got {min_count!r}")
    if not isinstance(texts, Encoded):
        texts = list(texts)
    total = texts.n_texts if isinstance(texts, Encoded) else len(texts)
    if expected is None:
        if prompts is None:
            raise ValueError("detect_leaks needs expected= or prompts= to infer it from")
        per_text = infer_expected(prompts)
        if len(per_text) != total:
            raise ValueError(f"{len(per_text)} prompts for {total} texts")
    elif isinstance(expected, str):
        per_text = [expected] * total
    else:
        per_text = list(expected)
        if len(per_text) != total:
            raise ValueError(f"{len(per_text)} expectations for {total} texts")
    table, names = leak_table()
    col = {n: k for k, n in enumerate(names)}
    base = {resolve_script(a) for a in allow} | set(IGNORED)
    allowed_of: dict[str, np.ndarray] = {}
    for spec in set(e for e in per_text if e is not None):
        mask = np.zeros(len(names), dtype=bool)
        for script in base | set(native_scripts(spec)):
            mask[col[script]] = True
        mask[col[HAN_NOT_JIS]] = mask[col["Han"]] and spec.lower() != "ja"
        allowed_of[spec] = mask
    flags = np.zeros(total, dtype=bool)
    foreign: list[dict[str, int]] = [{} for _ in range(total)]
    specs = np.array([e if e is not None else "" for e in per_text], dtype=object)
    han, nonjis = col["Han"], col[HAN_NOT_JIS]
    for first, stop, enc in blocks(texts, max_texts=_BLOCK_TEXTS):
        counts = count_columns(enc, table, len(names))
        for spec, allowed in allowed_of.items():
            rows = np.flatnonzero(specs[first:stop] == spec)
            sub = counts[rows]
            if spec.lower() != "ja":  # outside Japanese, every Han character is simply Han
                sub[:, han] += sub[:, nonjis]
                sub[:, nonjis] = 0
            sub[:, allowed] = 0
            flags[first + rows] = sub.sum(axis=1) >= min_count
            hit_rows, hit_cols = np.nonzero(sub)
            at = (first + rows[hit_rows]).tolist()
            for i, c, k in zip(at, hit_cols.tolist(), sub[hit_rows, hit_cols].tolist()):
                foreign[i][names[c]] = k
            for i in set(at):
                if len(foreign[i]) > 1:  # most found first, then by name
                    foreign[i] = dict(sorted(foreign[i].items(), key=lambda kv: (-kv[1], kv[0])))
    return LeakReport(flags, foreign, per_text)


def leak_rate_by_group(flags: Sequence[bool] | np.ndarray, groups: Sequence[Hashable]) -> dict[Hashable, dict]:
    """Per group (in order of first appearance): ``{"rows", "leaks", "rate"}``."""
    flags = np.asarray(flags, dtype=bool)
    if len(groups) != flags.shape[0]:
        raise ValueError(f"{len(groups)} groups for {flags.shape[0]} flags")
    out: dict[Hashable, dict] = {}
    for g, f in zip(groups, flags.tolist()):
        entry = out.setdefault(g, {"rows": 0, "leaks": 0, "rate": 0.0})
        entry["rows"] += 1
        entry["leaks"] += int(f)
    for entry in out.values():
        entry["rate"] = entry["leaks"] / entry["rows"]
    return out
