"""Kernels against their plain-Python references, and exact values for hand-built cases."""
from __future__ import annotations

import random

import numpy as np
import pytest
import unicodedataplus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval752.kernels import (
    HAN_NOT_JIS,
    Encoded,
    all_scripts,
    decode_span,
    detect_leaks,
    encode,
    has_cyrillic,
    infer_expected,
    leak_rate_by_group,
    ngram_repeat_details,
    ngram_repeats,
    script_counts,
    slice_encoded,
)
from eval752.kernels import reference as ref
from eval752.kernels.columnar import blocks
from eval752.kernels.scripts import load_or_build

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

small_texts = st.lists(st.text(alphabet=st.sampled_from("ab"), max_size=40), min_size=1, max_size=20) | st.lists(
    st.text(alphabet=st.sampled_from("abc"), max_size=60), min_size=1, max_size=20
)


def check_ngrams(texts: list[str], n: int, threshold: int) -> None:
    got = ngram_repeats(texts, n, threshold).tolist()
    assert got == [ref.ngram_repeats_quadratic(t, n, threshold) for t in texts]
    assert got == [ref.ngram_repeats_distinct(t, n, threshold) for t in texts]
    details = ngram_repeat_details(texts, n, threshold)
    assert details == [ref.ngram_first_repeat(t, n, threshold) for t in texts]
    enc = encode(texts)  # the Encoded path counts in the kernel instead of with str.count
    assert ngram_repeats(enc, n, threshold).tolist() == got
    assert ngram_repeat_details(enc, n, threshold) == details
    for t, (gram, count) in zip(texts, details):
        if gram is not None:
            assert len(gram) == n and count == t.count(gram) >= threshold


@FAST
@given(small_texts, st.integers(1, 5), st.integers(2, 6))
def test_ngram_small_alphabets_match_reference(texts, n, threshold):
    check_ngrams(texts, n, threshold)


@st.composite
def unicode_texts(draw):
    alphabet = draw(st.lists(st.characters(), min_size=1, max_size=4, unique=True))
    few = st.text(alphabet=st.sampled_from(alphabet), max_size=50)
    return draw(st.lists(few | st.text(max_size=30), min_size=1, max_size=15))


@FAST
@given(unicode_texts(), st.integers(1, 6), st.integers(1, 6))
def test_ngram_full_unicode_matches_reference(texts, n, threshold):
    check_ngrams(texts, n, threshold)


def test_ngram_long_texts_prefix_pass_and_after():
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzАБВГДЕЖЗ日本語\U0001F600"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2000, 6000))) for _ in range(12)]
    texts[3] = texts[3][:3000] + "xyz!" * 5  # repeat only after the prefix
    texts[4] = "xyz!" * 5 + texts[4]  # repeat at once
    texts.append("q" * 10_000)
    for n, threshold in ((3, 4), (4, 3), (5, 5), (1, 400)):
        got = ngram_repeat_details(texts, n, threshold)
        assert got == [ref.ngram_first_repeat(t, n, threshold) for t in texts]
        assert ngram_repeat_details(encode(texts), n, threshold) == got
        assert ngram_repeats(texts, n, threshold).tolist() == [g is not None for g, _ in got]
    assert ngram_repeat_details(texts[3:5], 4, 5) == [("xyz!", 5), ("xyz!", 5)]


def test_ngram_edge_cases():
    texts = ["", "ab", "aaaaaa", "a" * 12, "a" * 11, "\U0001F600" * 12, "日本" * 8]
    assert ngram_repeats(texts, 3, 4).tolist() == [False, False, False, True, False, True, True]
    assert ngram_repeat_details(texts, 3, 4) == [
        (None, 0), (None, 0), (None, 0), ("aaa", 4), (None, 0), ("\U0001F600" * 3, 4), ("日本日", 4),
    ]
    assert "aaaaaa".count("aaa") == 2
    # n = 1: a code point occurring `threshold` times; astral counts as one code point, not two
    assert ngram_repeats(["abcabca", "\U0001F600\U0001F600x", "xyz"], 1, 3).tolist() == [True, False, False]
    assert ngram_repeats(["\U0001F600\U0001F600x"], 1, 2).tolist() == [True]
    # threshold 1: any text with at least n code points
    assert ngram_repeats(["", "a", "ab"], 2, 1).tolist() == [False, False, True]
    assert ngram_repeats([], 3, 4).shape == (0,)


def test_ngram_ordinary_english_sentence_fails_default_check():
    sentence = "There is nothing in the theory that the other authors have shown."
    assert len(sentence) == 65
    assert ngram_repeats([sentence]).tolist() == [True]
    assert ngram_repeat_details([sentence]) == [(" th", 4)]
    assert ref.ngram_repeats_quadratic(sentence)


def test_ngram_reports_first_ngram_to_reach_threshold_with_full_count():
    # "xy" reaches 2 at position 2; "ab" at position 6; "ab" occurs 3 times in all
    assert ngram_repeat_details(["xyxyabab ab"], 2, 2) == [("xy", 2)]
    assert ngram_repeat_details(["abxabyabzxy"], 2, 2) == [("ab", 3)]


def _poly_hash(s: str) -> int:
    h = 0
    for ch in s:
        h = (h * 0x100000001B3 + ord(ch)) % (1 << 64)
    return h


def test_ngram_hash_collisions_are_verified():
    # Thue-Morse blocks of length 2**11 and their complements collide under any odd-base hash mod 2**64
    bits = [bin(i).count("1") % 2 for i in range(2048)]
    a = "".join("ab"[b] for b in bits)
    b = "".join("ba"[b] for b in bits)
    assert a != b and _poly_hash(a) == _poly_hash(b)
    text = a + b + a + b  # a and b each occur twice: four equal hashes, no n-gram four times
    assert ngram_repeats([text], 2048, 4).tolist() == [False]
    assert ngram_repeats([text], 2048, 2).tolist() == [True]
    assert ngram_repeat_details([text], 2048, 2) == [(a, 2)]


def test_ngram_parameters_are_validated():
    for n, t in ((0, 4), (3, 0), (2.5, 4), (True, 4)):
        with pytest.raises(ValueError):
            ngram_repeats(["abc"], n, t)


def test_encode_is_columnar_and_round_trips():
    texts = ["", "abc", "Привет", "\U0001F600\U00010348x", "\ud800 lone"]
    cps, offsets = enc = encode(texts)
    assert cps.dtype == np.uint32 and offsets.dtype == np.int64
    assert offsets.tolist() == [0, 0, 3, 9, 12, 18]
    assert cps[9:12].tolist() == [0x1F600, 0x10348, ord("x")]
    assert [enc.text(i) for i in range(enc.n_texts)] == texts
    part = slice_encoded(enc, 2, 4)
    assert [part.text(i) for i in range(part.n_texts)] == texts[2:4]
    assert decode_span(cps, 3, 5) == "Пр"
    assert encode([]).offsets.tolist() == [0]
    with pytest.raises(TypeError):
        encode("abc")


def test_blocks_split_by_code_points_and_texts():
    texts = ["abc", "", "defgh", "x" * 20, "ij", "k"]
    for batch in (texts, encode(texts)):
        parts = list(blocks(batch, size=6, max_texts=2))
        assert [(a, b) for a, b, _ in parts] == [(0, 2), (2, 3), (3, 4), (4, 6)]
        assert [e.text(i) for _, _, e in parts for i in range(e.n_texts)] == texts
    assert list(blocks([])) == []


def test_leak_detection_in_small_blocks_matches(monkeypatch):
    import eval752.kernels.leak as leak

    texts = ["ok", "Привет", "日本", "", "한국어", "fine"] * 3
    whole = detect_leaks(texts, "en")
    monkeypatch.setattr(leak, "_BLOCK_TEXTS", 4)
    parts = detect_leaks(texts, "en")
    assert parts.flags.tolist() == whole.flags.tolist() and parts.foreign == whole.foreign
    assert whole.flags.tolist() == [False, True, True, False, True, False] * 3


def test_kernels_accept_encoded_batches():
    texts = ["a" * 12, "Привет", ""]
    enc = encode(texts)
    assert isinstance(enc, Encoded)
    assert ngram_repeats(enc).tolist() == ngram_repeats(texts).tolist() == [True, False, False]
    assert has_cyrillic(enc).tolist() == [False, True, False]
    assert (script_counts(enc)[0] == script_counts(texts)[0]).all()


def test_has_cyrillic_boundaries():
    texts = ["\u03ff", "\u0400", "\u04ff", "\u0500", "abc", "", "x\u0451y"]
    assert has_cyrillic(texts).tolist() == [False, True, True, False, False, False, True]


@FAST
@given(st.lists(st.text(max_size=40) | st.text(alphabet=st.characters(min_codepoint=0x3F0, max_codepoint=0x510)),
                max_size=20))
def test_has_cyrillic_matches_reference(texts):
    assert has_cyrillic(texts).tolist() == [ref.has_cyrillic(t) for t in texts]


def test_script_counts_exact_values():
    counts, names = script_counts(["abc Привет 日本語 ひらがな カタカナ 한국어 123", "", "αβ שלום مرحبا नमस्ते สวัสดี ✓\u0301\U0001F600"])
    assert names == ["Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Thai", "Hangul",
                     "Hiragana", "Katakana", "Han", "Common", "Inherited", "Other"]
    expect = [
        {"Latin": 3, "Cyrillic": 6, "Han": 3, "Hiragana": 4, "Katakana": 4, "Hangul": 3, "Common": 9},
        {},
        {"Greek": 2, "Hebrew": 4, "Arabic": 5, "Devanagari": 6, "Thai": 6, "Common": 7, "Inherited": 1},
    ]
    for row, want in zip(counts.tolist(), expect):
        assert dict(zip(names, row)) == {name: want.get(name, 0) for name in names}
    other, _ = script_counts(["Ⰰ\U0010FFFF\ue000\ud800ա"])  # Glagolitic, unassigned, private use, surrogate, Armenian
    assert other[0].tolist()[-1] == 5


def test_script_counts_selected_and_all_columns():
    counts, names = script_counts(["ab Ωω ա"], scripts=["greek", "Armenian"])
    assert names == ["Greek", "Armenian", "Other"] and counts.tolist() == [[2, 1, 4]]
    counts, names = script_counts(["ab Ωω ա"], scripts="all")
    assert names == list(all_scripts()) and "Unknown" in names and counts.sum() == 7
    with pytest.raises(ValueError, match="did you mean"):
        script_counts(["x"], scripts=["Latn1"])


@FAST
@given(st.lists(st.text(max_size=30), max_size=10))
def test_script_counts_match_reference(texts):
    counts, names = script_counts(texts)
    assert counts.tolist() == [ref.script_counts(t, names, unicodedataplus.script) for t in texts]
    assert counts.sum(axis=1).tolist() == [len(t) for t in texts]


def test_script_table_cache_is_written_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL752_CACHE_DIR", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        return {"table": np.arange(4, dtype=np.uint8)}

    first = load_or_build("t.npz", build)
    second = load_or_build("t.npz", build)
    assert calls == [1] and (tmp_path / "t.npz").exists()
    assert second["table"].tolist() == first["table"].tolist() == [0, 1, 2, 3]


def test_leak_detection_exact_flags():
    texts = [
        "The answer is 42.",  # en, clean
        "The answer is 42, то есть сорок два.",  # en + Cyrillic
        "Use α and π; see x² ✓ 🙂.",  # en: Greek, symbols and emoji are allowed / ignored
        "東京は日本の首都です。",  # ja, clean
        "東京は日本の首都です。这是中国的说法",  # ja + simplified-only Han (这 说) and JIS Han
        "答えは한국어です",  # ja + Hangul
        "这是中文回答，包含カタカナ",  # zh + Katakana
        "서울은 한국의 수도입니다 (Seoul)",  # ko, Latin allowed
        "Москва — столица России.",  # ru, clean
        "Ответ: 東京",  # ru + Han
    ]
    expected = ["en", "en", "en", "ja", "ja", "ja", "zh", "ko", "ru", "ru"]
    report = detect_leaks(texts, expected)
    assert report.flags.tolist() == [False, True, False, False, True, True, True, False, False, True]
    assert report.foreign == [
        {}, {"Cyrillic": 14}, {}, {}, {HAN_NOT_JIS: 2}, {"Hangul": 3}, {"Katakana": 4}, {}, {}, {"Han": 2},
    ]
    strict = detect_leaks(["Use α and π"], "en", allow=())
    assert strict.flags.tolist() == [True] and strict.foreign == [{"Greek": 2}]
    assert detect_leaks(["Ответ Да"], "en", min_count=8).flags.tolist() == [False]
    assert detect_leaks(["Ответ Да"], "en", min_count=7).flags.tolist() == [True]
    assert detect_leaks(["Ответ Да"], "en", min_count=8).foreign == [{"Cyrillic": 7}]
    assert detect_leaks(["abc مرحبا"], "Arabic").flags.tolist() == [False]
    assert detect_leaks(["abc مرحبا"], "Arabic", allow=()).foreign == [{"Latin": 3}]
    with pytest.raises(ValueError, match="language code"):
        detect_leaks(["x"], "klingon")


def test_leak_expectation_inferred_from_prompts():
    prompts = ["What is 2+2?", "日本の首都は？", "中国的首都是哪里？", "Столица России?", "한국의 수도는?", "123 ?!", "ما هذا"]
    assert infer_expected(prompts) == ["en", "ja", "zh", "ru", "ko", None, "Arabic"]
    answers = ["Four, или четыре.", "東京です", "北京", "Москва", "서울", "Привет", "هذا كتاب"]
    report = detect_leaks(answers, prompts=prompts)
    assert report.flags.tolist() == [True, False, False, False, False, False, False]
    assert report.expected == ["en", "ja", "zh", "ru", "ko", None, "Arabic"]


def test_leak_rate_by_group():
    rates = leak_rate_by_group([True, False, True, True], ["m1", "m2", "m1", "m2"])
    assert rates == {"m1": {"rows": 2, "leaks": 2, "rate": 1.0}, "m2": {"rows": 2, "leaks": 1, "rate": 0.5}}
