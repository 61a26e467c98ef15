"""The streaming degeneration report over JSONL results files."""
from __future__ import annotations

import json

import pytest

from eval752.diagnostics import get_path, prompt_text, scan_results_file
from eval752.errors import InputFormatError


def eval752_row(item_id, model, prompt, text, reasoning=None, sample=0):
    return {
        "item_id": item_id, "sample": sample, "section": "s", "type": "freeform", "checker": "exact",
        "model": model,
        "request": {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": prompt}]},
        "response": {"text": text, "reasoning": reasoning},
        "verdict": None, "status": "ok",
    }


ROWS = [
    eval752_row("q1", "m1", "What is the capital of France?", "Paris, то есть Париж."),
    eval752_row("q2", "m1", "日本の首都は？", "東京です。这是", reasoning="go go go go go"),
    eval752_row("q3", "m2", "Name a colour.", "Blue."),
    eval752_row("q4", "m2", "Say hi.", "hi " * 5),
]


def write_jsonl(path, rows, extra=""):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + extra, encoding="utf-8")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_scan_eval752_results(tmp_path):
    src = write_jsonl(tmp_path / "results.jsonl", ROWS, extra="\n")
    out = tmp_path / "flags.jsonl"
    summary = scan_results_file(src, out, group_field="model", summary_path=tmp_path / "summary.json")
    flags = read_jsonl(out)
    assert flags == [
        {"row": 0, "line": 1, "id": "q1", "sample": 0, "group": "m1", "repeat": False, "repeat_field": None,
         "ngram": None, "ngram_count": 0, "cyrillic": True, "leak": True, "expected": "en",
         "foreign_scripts": {"Cyrillic": 11}},
        {"row": 1, "line": 2, "id": "q2", "sample": 0, "group": "m1", "repeat": True,
         "repeat_field": "response.reasoning", "ngram": "go ", "ngram_count": 4, "cyrillic": False, "leak": True,
         "expected": "ja", "foreign_scripts": {"Han_not_JIS": 1}},
        {"row": 2, "line": 3, "id": "q3", "sample": 0, "group": "m2", "repeat": False, "repeat_field": None,
         "ngram": None, "ngram_count": 0, "cyrillic": False, "leak": False, "expected": "en", "foreign_scripts": {}},
        {"row": 3, "line": 4, "id": "q4", "sample": 0, "group": "m2", "repeat": True,
         "repeat_field": "response.text", "ngram": "hi ", "ngram_count": 5, "cyrillic": False, "leak": False,
         "expected": "en", "foreign_scripts": {}},
    ]
    assert summary["rows"] == 4
    assert summary["overall"] == {"rows": 4, "repeat": 2, "leak": 2, "cyrillic": 1, "repeat_rate": 0.5,
                                  "leak_rate": 0.5, "cyrillic_rate": 0.25}
    assert summary["groups"]["m1"] == {"rows": 2, "repeat": 1, "leak": 2, "cyrillic": 1, "repeat_rate": 0.5,
                                       "leak_rate": 1.0, "cyrillic_rate": 0.5}
    assert summary["groups"]["m2"]["repeat_rate"] == 0.5 and summary["groups"]["m2"]["leak_rate"] == 0.0
    assert json.loads((tmp_path / "summary.json").read_text())["overall"] == summary["overall"]


def test_chunking_does_not_change_results(tmp_path):
    src = write_jsonl(tmp_path / "results.jsonl", ROWS * 7)
    one = scan_results_file(src, tmp_path / "a.jsonl", chunk_rows=1)
    many = scan_results_file(src, tmp_path / "b.jsonl", chunk_rows=5, chunk_bytes=700)
    whole = scan_results_file(src, tmp_path / "c.jsonl")
    assert list(whole["groups"]) == ["s"] and whole["groups"]["s"]["rows"] == 28  # default: by section
    outputs = [(tmp_path / name).read_text() for name in ("a.jsonl", "b.jsonl", "c.jsonl")]
    assert outputs[0] == outputs[1] == outputs[2]
    assert one["groups"] == many["groups"] == whole["groups"]
    assert [r["row"] for r in read_jsonl(tmp_path / "a.jsonl")] == list(range(28))


def test_generic_jsonl_with_dotted_paths_and_fixed_expectation(tmp_path):
    rows = [
        {"id": 7, "meta": {"vendor": "v1"}, "choices": [{"message": {"content": "Ответ: да"}}]},
        {"id": 8, "meta": {"vendor": "v2"}, "choices": [{"message": {"content": "Sure."}}]},
        {"id": 9, "choices": []},
    ]
    src = write_jsonl(tmp_path / "g.jsonl", rows)
    summary = scan_results_file(
        src, tmp_path / "o.jsonl", text_fields=["choices.0.message.content"], group_field="meta.vendor",
        id_field="id", expected="ru", n=2, threshold=2,
    )
    flags = read_jsonl(tmp_path / "o.jsonl")
    assert [(f["id"], f["group"], f["leak"], f["foreign_scripts"], f["cyrillic"]) for f in flags] == [
        (7, "v1", False, {}, True), (8, "v2", False, {}, False), (9, "(none)", False, {}, False),
    ]
    assert "sample" not in flags[0]
    assert set(summary["groups"]) == {"v1", "v2", "(none)"}


def test_malformed_line_names_file_and_line(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps(ROWS[0]) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"bad\.jsonl:3: not valid JSON"):
        scan_results_file(src, tmp_path / "o.jsonl")
    src.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"bad\.jsonl:1: expected a JSON object"):
        scan_results_file(src, tmp_path / "o.jsonl")
    src.write_text(json.dumps({"response": {"text": 5}}) + "\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"bad\.jsonl:1: field 'response.text' is int"):
        scan_results_file(src, tmp_path / "o.jsonl")
    src.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(InputFormatError, match=r"bad\.jsonl:1"):
        scan_results_file(src, tmp_path / "o.jsonl")


def test_helpers():
    row = {"a": {"b": [{"c": "x"}]}}
    assert get_path(row, "a.b.0.c") == "x" and get_path(row, "a.b.-1.c") == "x"
    assert get_path(row, "a.b.1.c") is not None and get_path(row, "a.z") is get_path(row, "a.b.1.c")
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "hi"},
                {"type": "image_url", "image_url": {}}]}, {"role": "user", "content": "there"}]
    assert prompt_text(messages) == "hi\nthere"
    assert prompt_text("plain") == "plain" and prompt_text(None) == ""
    with pytest.raises(ValueError):
        scan_results_file("x", "y", expected="klingon")
    with pytest.raises(ValueError, match="threshold"):
        scan_results_file("x", "y", threshold=0)


def test_memory_does_not_grow_with_file_size(tmp_path):
    import tracemalloc

    def peak_for(copies: int) -> int:
        src = write_jsonl(tmp_path / f"r{copies}.jsonl", ROWS * copies)
        scan_results_file(src, tmp_path / "warm.jsonl", chunk_rows=200)  # warm caches outside the trace
        tracemalloc.start()
        try:
            scan_results_file(src, tmp_path / f"o{copies}.jsonl", chunk_rows=200)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak_for(60), peak_for(480)  # 240 and 1,920 rows
    assert large < 1.5 * small
