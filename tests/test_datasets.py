"""Native dataset format, loader, writer, safe JSONL reader and the MMLU / GSM8K / HumanEval importers."""
from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tracemalloc
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # running `pytest` without installing the package
    sys.path.insert(0, str(ROOT))

from eval752.datasets import (  # noqa: E402
    Dataset,
    LineProblem,
    detect_format,
    import_gsm8k,
    import_humaneval,
    import_mmlu,
    iter_jsonl,
    load_any,
    load_dataset,
    make_dataset,
    write_dataset,
)
from eval752.datasets.gsm8k import final_answer  # noqa: E402
from eval752.datasets.jsonl import raw_lines  # noqa: E402
from eval752.errors import ConfigError, DatasetError, InputFormatError  # noqa: E402
from eval752.types import Item  # noqa: E402

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
PNG = b"\x89PNG\r\n\x1a\nfake image bytes"


def row(**fields) -> str:
    return json.dumps(fields)


def q(id_: str = "q1", text: str = "What is 2+2?", answer="4", **extra) -> str:
    return row(id=id_, type="freeform", inputs={"text": text}, answer=answer, **extra)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def problems_of(path, **kwargs) -> list[str]:
    with pytest.raises(DatasetError) as info:
        load_dataset(path, **kwargs)
    return info.value.problems


def make_folder(root: Path) -> Path:
    """A folder dataset: two sections (written out of order) and one image asset."""
    write_lines(root / "sections" / "vision.jsonl", [
        row(id="v1", type="mcq_single", inputs={"text": "What animal?", "images": ["img/cat.png"]},
            choices=["cat", "dog"], answer="cat", meta={"source": "photo", "nested": {"k": [1, 2]}}),
    ])
    write_lines(root / "sections" / "arith.jsonl", [
        q("a1"),
        "",
        row(id="a2", type="mcq_multi", inputs={"text": "Even numbers?"}, choices=["1", "2", "4"],
            answer=["2", "4"], params={"temperature": 0, "max_tokens": 16, "stop": ["\n"]}),
    ])
    (root / "assets" / "img").mkdir(parents=True)
    (root / "assets" / "img" / "cat.png").write_bytes(PNG)
    return root


# ---------------------------------------------------------------- valid datasets


def test_single_file_dataset(tmp_path):
    path = write_lines(tmp_path / "basics.jsonl", [
        q("q1", answer=18),
        row(id="q2", type="code", inputs={"text": "def f():"}, checker={"kind": "code", "timeout": 3}),
        row(id="q3", type="judge_pairwise", inputs={"text": "Compare"}, criteria=["helpful", "honest"]),
        row(id="q4", type="freeform", inputs={"text": "Say hi"}, criteria="friendly"),
    ])
    ds = load_dataset(path)
    assert isinstance(ds, Dataset)
    assert ds.name == "basics"
    assert ds.root == tmp_path
    assert ds.sections == ("basics",)
    assert [i.id for i in ds.items] == ["q1", "q2", "q3", "q4"]
    first = ds.items[0]
    assert first == Item(id="q1", type="freeform", text="What is 2+2?", section="basics", answer="18")
    assert ds.items[1].checker == {"kind": "code", "timeout": 3}
    assert ds.items[1].answer is None
    assert ds.items[2].criteria == ["helpful", "honest"]
    assert ds.items_needing_vision() == []


def test_number_answers_become_strings(tmp_path):
    path = write_lines(tmp_path / "n.jsonl", [q("a", answer=18), q("b", answer=2.50), q("c", answer=-3)])
    assert [i.answer for i in load_dataset(path).items] == ["18", "2.5", "-3"]


def test_folder_dataset_with_sections_and_assets(tmp_path):
    root = make_folder(tmp_path / "ds")
    ds = load_dataset(root)
    assert ds.name == "ds"
    assert ds.sections == ("arith", "vision")
    assert [(i.id, i.section) for i in ds.items] == [("a1", "arith"), ("a2", "arith"), ("v1", "vision")]
    assert ds.items[1].answer == ("2", "4")
    assert ds.items[1].params == {"temperature": 0, "max_tokens": 16, "stop": ["\n"]}
    assert ds.items[2].images == ("img/cat.png",)
    assert ds.items[2].meta == {"source": "photo", "nested": {"k": [1, 2]}}
    assert ds.items_needing_vision() == ["v1"]
    assert ds.asset_path("img/cat.png") == root / "assets" / "img" / "cat.png"
    assert ds.asset_path("img/cat.png").read_bytes() == PNG
    with pytest.raises(ValueError, match="escapes the dataset folder"):
        ds.asset_path("../secret")


def test_sections_filter_and_limit(tmp_path):
    root = make_folder(tmp_path / "ds")
    assert [i.id for i in load_dataset(root, sections=["vision"]).items] == ["v1"]
    limited = load_dataset(root, limit=1)
    assert [i.id for i in limited.items] == ["a1"]
    assert limited.sections == ("arith",)
    assert len(load_dataset(root, limit=10).items) == 3
    with pytest.raises(ValueError, match="limit must be"):
        load_dataset(root, limit=-1)


# ---------------------------------------------------------------- version hash


def test_version_hash_ignores_whitespace_and_key_order(tmp_path):
    a = write_lines(tmp_path / "a" / "items.jsonl", [
        row(id="q1", type="mcq_single", inputs={"text": "T"}, choices=["x", "y"], answer="y", meta={"a": 1, "b": 2}),
    ])
    b = write_lines(tmp_path / "b" / "items.jsonl", [
        "",
        '  {"meta": {"b": 2, "a": 1},   "answer": "y", "choices": ["x","y"],'
        '"inputs": {"text": "T"}, "type": "mcq_single", "id": "q1"}   ',
    ])
    ds_a, ds_b = load_dataset(a), load_dataset(b)
    assert len(ds_a.version_hash) == 64
    assert ds_a.version_hash == ds_b.version_hash
    assert "version_hash" in ds_a.__dict__  # computed once, then cached
    c = write_lines(tmp_path / "c" / "items.jsonl", [
        row(id="q1", type="mcq_single", inputs={"text": "T"}, choices=["x", "y"], answer="x", meta={"a": 1, "b": 2}),
    ])
    assert load_dataset(c).version_hash != ds_a.version_hash
    renamed = write_lines(tmp_path / "d" / "other.jsonl", [Path(a).read_text().strip()])
    assert load_dataset(renamed).version_hash != ds_a.version_hash  # the section name is content


def test_version_hash_follows_asset_bytes(tmp_path):
    root = make_folder(tmp_path / "ds")
    before = load_dataset(root).version_hash
    assert load_dataset(root).version_hash == before
    (root / "assets" / "img" / "cat.png").write_bytes(PNG + b"!")
    assert load_dataset(root).version_hash != before


def test_write_then_load_round_trip(tmp_path):
    ds = load_dataset(make_folder(tmp_path / "ds"))
    out = tmp_path / "copy"
    write_dataset(ds, out)
    assert sorted(p.name for p in (out / "sections").iterdir()) == ["arith.jsonl", "vision.jsonl"]
    assert (out / "assets" / "img" / "cat.png").read_bytes() == PNG
    again = load_dataset(out)
    assert again.items == ds.items
    assert again.version_hash == ds.version_hash
    with pytest.raises(FileExistsError):
        write_dataset(ds, out)


def test_write_in_memory_dataset(tmp_path):
    items = [Item(id="b1", type="freeform", text="t", section="b", answer="1"),
             Item(id="a1", type="freeform", text="t", section="a", answer="2")]
    ds = make_dataset("mem", None, items)
    assert ds.sections == ("a", "b") and [i.id for i in ds.items] == ["a1", "b1"]
    write_dataset(ds, tmp_path / "mem")
    assert load_dataset(tmp_path / "mem").version_hash == ds.version_hash


# ---------------------------------------------------------------- bad input: one test each


def test_invalid_json_names_parser_message_and_column(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [q("q1"), '{"id": "q2", "type": }'])
    assert problems_of(path) == [f"{path}:2: -: invalid JSON: Expecting value (column 22)"]


def test_invalid_utf8_names_byte_offset(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(q("q1").encode() + b"\n" + b'{"id": "q\xff2"}\n')
    offset = len(q("q1")) + 1 + len('{"id": "q')
    assert problems_of(path) == [f"{path}:2: -: invalid UTF-8: byte 0xff at byte offset {offset} of the file"]


def test_bom_is_refused(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + q("q1").encode() + b"\n")
    assert problems_of(path) == [
        f"{path}:1: -: file starts with a UTF-8 byte-order mark; save it without one"
    ]


def test_long_line_is_skipped_and_reading_goes_on(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [q("q1"), q("q2", text="x" * 5000), "{bad"])
    assert problems_of(path, max_line_bytes=1000) == [
        f"{path}:2: -: line is longer than 1000 bytes; skipped",
        f"{path}:3: -: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]


class _Endless(io.RawIOBase):
    """A stream of one huge line (generated on the fly) followed by a short one."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.tail = b'\n{"ok": 1}\n'

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.left > 0:
            take = min(n, self.left)
            self.left -= take
            return b"[" * take
        out, self.tail = self.tail[:n], self.tail[n:]
        return out


def test_long_line_is_never_held_in_memory_whole():
    tracemalloc.start()
    lines = list(raw_lines(_Endless(40_000_000), max_line_bytes=1_000_000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert lines == [(1, 0, None), (2, 40_000_001, b'{"ok": 1}')]
    assert peak < 8_000_000


def test_nan_and_infinity_are_refused(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [
        '{"id": "a", "type": "freeform", "inputs": {"text": "t"}, "answer": NaN}',
        '{"id": "b", "type": "freeform", "inputs": {"text": "t"}, "meta": {"x": Infinity}}',
        '{"id": "c", "type": "freeform", "inputs": {"text": "t"}, "meta": {"x": [-Infinity]}}',
    ])
    assert problems_of(path) == [
        f"{path}:1: -: invalid JSON: NaN is not allowed (write null or a number)",
        f"{path}:2: -: invalid JSON: Infinity is not allowed (write null or a number)",
        f"{path}:3: -: invalid JSON: -Infinity is not allowed (write null or a number)",
    ]


def test_deep_nesting_is_a_clean_problem(tmp_path):
    deep_meta = '{"id": "b", "type": "freeform", "inputs": {"text": "t"}, "answer": "1", "meta": {"x": '
    path = write_lines(tmp_path / "d.jsonl", [
        "[" * 100_000,
        deep_meta + "[" * 70 + "]" * 70 + "}}",
        q("ok", text="[[[[[[" * 30),  # brackets inside strings do not count
    ])
    assert problems_of(path) == [
        f"{path}:1: -: nesting deeper than 64 levels",
        f"{path}:2: -: nesting deeper than 64 levels",
    ]


def test_very_deep_nesting_with_a_high_limit_does_not_crash(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", ["[" * 100_000 + "]" * 100_000])
    assert problems_of(path, max_depth=1_000_000) == [f"{path}:1: -: nesting deeper than 1000000 levels"]


def test_line_that_is_not_an_object(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [q("q1"), "[1, 2]", '"text"', "3"])
    assert problems_of(path) == [
        f"{path}:2: -: expected a JSON object, got array",
        f"{path}:3: -: expected a JSON object, got string",
        f"{path}:4: -: expected a JSON object, got number",
    ]


def test_blank_lines_are_skipped_and_counted(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", ["", q("q1"), "   ", "\t", q("q2", answer=[])])
    assert problems_of(path) == [f"{path}:5: answer: expected a reference string, got array"]


def test_duplicate_key_is_refused(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", ['{"id": "a", "id": "b", "type": "freeform", "inputs": {"text": "t"}}'])
    assert problems_of(path) == [f"{path}:1: -: invalid JSON: key 'id' appears twice in one object"]


def test_wrong_field_types(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [
        row(id=5, type="freeform", inputs="x", answer=True, checker=3, criteria=7, params=[], meta=[]),
        row(id="", type=["mcq_single"], inputs={"text": " ", "images": "a.png", "audio": [""]}),
        row(id="c", type="freeform", inputs={"text": "t"}, answer="1", checker={"name": "exact"},
            params={"temperature": -1, "top_p": 0, "top_k": 1.5, "max_tokens": 0, "seed": "1", "stop": [1]}),
    ])
    assert problems_of(path) == [
        f"{path}:1: id: expected a non-empty string, got number",
        f"{path}:1: inputs: expected an object, got string",
        f"{path}:1: answer: expected a reference string, got boolean",
        f"{path}:1: checker: expected a non-empty string, got number",
        f"{path}:1: criteria: expected a string, list or object, got number",
        f"{path}:1: params: expected an object, got array",
        f"{path}:1: meta: expected an object, got array",
        f"{path}:2: id: must not be empty",
        f"{path}:2: type: expected a string, got array",
        f"{path}:2: inputs.text: must not be empty",
        f"{path}:2: inputs.images: expected a list of paths under assets/, got string",
        f"{path}:2: inputs.audio[0]: must not be empty",
        f"{path}:3: checker.kind: expected a non-empty string naming the checker",
        f"{path}:3: params.temperature: expected a number >= 0, got -1",
        f"{path}:3: params.top_p: expected a number in (0, 1], got 0",
        f"{path}:3: params.top_k: expected an integer >= 0, got 1.5",
        f"{path}:3: params.max_tokens: expected an integer >= 1, got 0",
        f"{path}:3: params.seed: expected an integer, got '1'",
        f"{path}:3: params.stop: expected a string or a list of strings, got array",
    ]


def test_missing_required_fields(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [
        "{}",
        row(id="a", type="mcq_single", inputs={}),
        row(id="b", type="freeform", inputs={"text": "t"}),
    ])
    assert problems_of(path) == [
        f"{path}:1: id: required field is missing",
        f"{path}:1: type: required field is missing",
        f"{path}:1: inputs: required field is missing",
        f"{path}:2: inputs.text: required field is missing",
        f"{path}:2: choices: required field is missing",
        f"{path}:2: answer: required field is missing",
        f"{path}:3: answer: required field is missing (or name a checker or criteria)",
    ]


def test_unknown_type_suggests_the_closest(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [row(id="a", type="free_form", inputs={"text": "t"}, answer="1")])
    assert problems_of(path) == [
        f"{path}:1: type: unknown item type 'free_form' (did you mean 'freeform'?); "
        "valid: mcq_single, mcq_multi, freeform, code, judge_pairwise"
    ]


def test_unknown_fields_suggest_the_closest(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [
        row(id="a", type="freeform", inputs={"text": "t", "image": ["x.png"]}, anwser="1", params={"temprature": 0}),
    ])
    assert problems_of(path) == [
        f"{path}:1: anwser: unknown field 'anwser' (did you mean 'answer'?); "
        "valid: answer, checker, choices, criteria, id, inputs, meta, params, type",
        f"{path}:1: inputs.image: unknown input 'image' (did you mean 'images'?); valid: audio, images, text, video",
        f"{path}:1: answer: required field is missing (or name a checker or criteria)",
        f"{path}:1: params.temprature: unknown generation parameter 'temprature' (did you mean 'temperature'?); "
        "valid: max_tokens, seed, stop, temperature, top_k, top_p",
    ]


def test_mcq_answers_must_be_among_the_choices(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [
        row(id="a", type="mcq_single", inputs={"text": "t"}, choices=["x", "y"], answer="z"),
        row(id="b", type="mcq_multi", inputs={"text": "t"}, choices=["x", "y"], answer=["x", "x", "w"]),
        row(id="c", type="mcq_multi", inputs={"text": "t"}, choices=["x", "y"], answer=[]),
        row(id="d", type="mcq_single", inputs={"text": "t"}, choices=["x", "x", ""], answer=["x"]),
        row(id="e", type="mcq_single", inputs={"text": "t"}, choices=["x"], answer="x"),
        row(id="f", type="freeform", inputs={"text": "t"}, choices=["x", "y"], answer="x"),
    ])
    assert problems_of(path) == [
        f"{path}:1: answer: 'z' is not one of the choices",
        f"{path}:2: answer[1]: duplicate answer 'x' (same as answer[0])",
        f"{path}:2: answer[2]: 'w' is not one of the choices",
        f"{path}:3: answer: expected a non-empty list of choices, got an empty list",
        f"{path}:4: choices[1]: duplicate choice 'x' (same as choices[0])",
        f"{path}:4: choices[2]: must not be empty",
        f"{path}:4: answer: expected one of the choices (a string), got array",
        f"{path}:5: choices: expected at least 2 choices, got 1",
        f"{path}:6: choices: only mcq_single and mcq_multi items have choices",
    ]


def test_duplicate_ids_name_the_first_line(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [q("q0"), "", q("q1"), q("q2"), q("q1")])
    assert problems_of(path) == [f"{path}:5: id: duplicate id 'q1' (first at line 3)"]


def test_duplicate_ids_across_sections(tmp_path):
    root = tmp_path / "ds"
    write_lines(root / "sections" / "a.jsonl", [q("q1")])
    write_lines(root / "sections" / "b.jsonl", [q("q2"), q("q1")])
    shown = root / "sections"
    assert problems_of(root) == [f"{shown}/b.jsonl:2: id: duplicate id 'q1' (first at {shown}/a.jsonl:1)"]


def test_missing_and_escaping_assets(tmp_path):
    root = tmp_path / "ds"
    (root / "assets").mkdir(parents=True)
    (root / "assets" / "ok.png").write_bytes(PNG)
    (tmp_path / "outside.png").write_bytes(PNG)
    os.symlink(tmp_path / "outside.png", root / "assets" / "link.png")
    write_lines(root / "sections" / "s.jsonl", [
        row(id="a", type="freeform", inputs={"text": "t", "images": ["ok.png", "missing.png"]}, answer="1"),
        row(id="b", type="freeform", inputs={"text": "t", "images": ["../outside.png"]}, answer="1"),
        row(id="c", type="freeform", inputs={"text": "t", "audio": ["/etc/passwd"]}, answer="1"),
        row(id="d", type="freeform", inputs={"text": "t", "video": ["link.png"]}, answer="1"),
    ])
    f = root / "sections" / "s.jsonl"
    assert problems_of(root) == [
        f"{f}:1: inputs.images[1]: asset 'missing.png' not found (looked for {root}/assets/missing.png)",
        f"{f}:2: inputs.images[0]: asset path '../outside.png' escapes the dataset folder",
        f"{f}:3: inputs.audio[0]: asset path '/etc/passwd' is absolute; give a path relative to assets/",
        f"{f}:4: inputs.video[0]: asset 'link.png' resolves outside the dataset folder",
    ]


def test_unknown_section_in_filter(tmp_path):
    root = make_folder(tmp_path / "ds")
    assert problems_of(root, sections=["arith", "visoin"]) == [
        f"{root}:-: sections: unknown section 'visoin' (did you mean 'vision'?); valid: arith, vision"
    ]


def test_empty_dataset(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", ["", "  "])
    assert problems_of(path) == [f"{path}:-: -: dataset has no items"]
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert problems_of(empty) == [f"{empty}:-: -: dataset has no items"]


def test_missing_path_and_folder_without_sections(tmp_path):
    assert problems_of(tmp_path / "nope") == [f"{tmp_path / 'nope'}:-: -: no such file or folder"]
    assert problems_of(tmp_path) == [
        f"{tmp_path}:-: -: folder has no sections/ folder (a dataset folder holds sections/*.jsonl and assets/)"
    ]


def test_every_problem_is_reported_not_only_the_first(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [
        q("q1"),
        '{"id": "q2",',
        row(id="q3", type="mcq_single", inputs={"text": "t"}, choices=["a", "b"], answer="c"),
        q("q1"),
    ])
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert info.value.problems == [
        f"{path}:2: -: invalid JSON: Expecting property name enclosed in double quotes (column 13)",
        f"{path}:3: answer: 'c' is not one of the choices",
        f"{path}:4: id: duplicate id 'q1' (first at line 1)",
    ]
    assert str(info.value).startswith("dataset has 3 problems:\n")


def test_iter_jsonl_yields_values_and_problems(tmp_path):
    path = tmp_path / "r.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b'{"a": 1}\n\n[1]\nnope\n"s"')
    assert list(iter_jsonl(path)) == [
        (1, {"a": 1}),
        (3, [1]),
        (4, LineProblem("invalid JSON: Expecting value (column 1)")),
        (5, "s"),
    ]
    assert LineProblem("x").format("f.jsonl", 4) == "f.jsonl:4: -: x"


# ---------------------------------------------------------------- importers on small files


def _gz_lines(path: Path, rows: list[dict]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return path


def _mmlu_row(question, a, b, c, d, correct, topic):
    return {"question": question, "answer_a": a, "answer_b": b, "answer_c": c, "answer_d": d,
            "correct_answer": correct, "topic": topic}


def test_import_mmlu_small(tmp_path):
    path = _gz_lines(tmp_path / "mmlu.jsonl.gz", [
        _mmlu_row("2+2?", "3", "4", "5", "6", "B", "math"),
        _mmlu_row("question", "answer_a", "answer_b", "answer_c", "answer_d", "answer", "math"),
        _mmlu_row("Capital of France?", "Paris", "Paris", "Rome", "Oslo", "B", "geography"),
        _mmlu_row("", "x", "y", "z", "w", "A", "math"),
    ])
    ds, warnings = import_mmlu(path)
    assert warnings == [
        f"{path}:2: correct_answer: expected one of A, B, C, D, got 'answer'; row skipped",
        f"{path}:4: question: must not be empty; row skipped",
    ]
    assert ds.sections == ("geography", "math")
    assert [i.id for i in ds.items] == ["mmlu-3", "mmlu-1"]
    geo, math = ds.items
    assert math == Item(id="mmlu-1", type="mcq_single", text="2+2?", section="math",
                        choices=("3", "4", "5", "6"), answer="4", meta={"topic": "math"})
    assert geo.choices == ("Paris", "Rome", "Oslo") and geo.answer == "Paris"
    assert geo.meta == {"topic": "geography", "merged_duplicate_choices": ["B"]}
    write_dataset(ds, tmp_path / "native")
    assert load_dataset(tmp_path / "native").version_hash == ds.version_hash


def test_import_mmlu_structural_problems(tmp_path):
    path = tmp_path / "m.jsonl"
    good = _mmlu_row("q", "a", "b", "c", "d", "A", "t")
    write_lines(path, [json.dumps(good), json.dumps({**good, "topic": 3}),
                       json.dumps({k: v for k, v in good.items() if k != "answer_d"}), "{"])
    with pytest.raises(DatasetError) as info:
        import_mmlu(path)
    assert info.value.problems == [
        f"{path}:2: topic: expected a string, got number",
        f"{path}:3: answer_d: required field is missing",
        f"{path}:4: -: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]


def test_import_gsm8k_small(tmp_path):
    path = write_lines(tmp_path / "test.jsonl", [
        json.dumps({"question": "How many?", "answer": "2 + 3 = <<2+3=5>>5\n#### 1,205"}),
        json.dumps({"question": "No final?", "answer": "just words"}),
        json.dumps({"question": "Negative?", "answer": "so\n#### -7"}),
    ])
    ds, warnings = import_gsm8k(path)
    assert warnings == [f"{path}:2: answer: no '#### <number>' at the end of the solution; row skipped"]
    assert ds.items[0] == Item(id="gsm8k-1", type="freeform", text="How many?", section="test", answer="1205",
                               checker="numeric", meta={"solution": "2 + 3 = <<2+3=5>>5\n#### 1,205"})
    assert ds.items[1].answer == "-7"
    assert final_answer("x #### 3.5") == "3.5" and final_answer("#### ten") is None


def test_import_humaneval_small(tmp_path):
    task = {"task_id": "HumanEval/0", "prompt": "def f():\n", "entry_point": "f",
            "canonical_solution": "    return 1\n", "test": "def check(c):\n    assert c() == 1\n"}
    path = _gz_lines(tmp_path / "HumanEval.jsonl.gz", [task, task])
    ds, warnings = import_humaneval(path)
    assert warnings == [f"{path}:2: task_id: duplicate id 'HumanEval/0' (first at line 1); row skipped"]
    assert ds.items == (Item(id="HumanEval/0", type="code", text="def f():\n", section="HumanEval",
                             answer="    return 1\n", checker="code",
                             meta={"entry_point": "f", "test": task["test"], "prompt": "def f():\n"}),)


def test_load_any_detects_format(tmp_path):
    native = write_lines(tmp_path / "n.jsonl", [q("q1")])
    gsm = write_lines(tmp_path / "g.jsonl", [json.dumps({"question": "q", "answer": "#### 1"})])
    mmlu = _gz_lines(tmp_path / "m.jsonl.gz", [_mmlu_row("q", "a", "b", "c", "d", "A", "t")])
    assert detect_format(native) == "native"
    assert detect_format(gsm) == "gsm8k"
    assert detect_format(mmlu) == "mmlu"
    assert detect_format(make_folder(tmp_path / "ds")) == "native"
    ds, warnings = load_any(gsm)
    assert (ds.name, warnings, ds.items[0].answer) == ("gsm8k", [], "1")
    assert load_any(native)[0].items[0].id == "q1"
    assert load_any(mmlu, "mmlu", sections=["t"], limit=1)[0].items[0].id == "mmlu-1"


def test_load_any_failures(tmp_path):
    other = write_lines(tmp_path / "o.jsonl", [json.dumps({"prompt": "p", "completion": "c"})])
    with pytest.raises(InputFormatError) as info:
        load_any(other)
    assert str(info.value) == (
        f"{other}:1: cannot tell the dataset format from the first row (keys: prompt, completion); "
        "expected the keys of one of: native: id, type, inputs; mmlu: question, answer_a, answer_b, answer_c, "
        "answer_d, correct_answer, topic; humaneval: task_id, prompt, entry_point, canonical_solution, test; "
        "gsm8k: question, answer"
    )
    with pytest.raises(InputFormatError) as info:
        load_any(other, "gsm8k")
    assert str(info.value) == (
        f"{other}:1: not a GSM8K file: expected rows with keys question, answer; "
        "the first row has keys prompt, completion"
    )
    with pytest.raises(ConfigError) as info:
        load_any(other, "gms8k")
    assert str(info.value) == (
        "unknown dataset format 'gms8k' (did you mean 'gsm8k'?); valid: auto, native, mmlu, gsm8k, humaneval"
    )
    gsm = write_lines(tmp_path / "g.jsonl", [json.dumps({"question": "q", "answer": "#### 1"})])
    with pytest.raises(DatasetError) as dinfo:
        load_any(gsm, sections=["tset"])
    assert dinfo.value.problems == [f"{gsm}:-: sections: unknown section 'tset'; valid: g"]


# ---------------------------------------------------------------- real data


def _real(rel: str) -> Path:
    path = REALDATA / rel
    if not path.is_file():
        pytest.skip(f"real data not available: {path} is absent")
    return path


@pytest.mark.realdata
def test_real_mmlu():
    path = _real("mmlu/mmlu.jsonl.gz")
    ds, warnings = import_mmlu(path)
    assert len(ds.items) == 14_042
    assert len(ds.sections) == 57
    assert warnings == [
        f"{path}:11777: correct_answer: expected one of A, B, C, D, got 'answer'; row skipped",
        f"{path}:12794: correct_answer: expected one of A, B, C, D, got 'answer'; row skipped",
    ]
    assert {i.id for i in ds.items}.isdisjoint({"mmlu-11777", "mmlu-12794"})
    assert all(i.answer in i.choices for i in ds.items)
    merged = sorted(int(i.id[5:]) for i in ds.items if "merged_duplicate_choices" in i.meta)
    assert merged == [1081, 1227, 1505, 1851, 3182, 3435, 4165, 8485, 11891]


@pytest.mark.realdata
def test_real_gsm8k():
    ds, warnings = import_gsm8k(_real("gsm8k/test.jsonl"))
    assert (len(ds.items), warnings, ds.sections) == (1_319, [], ("test",))
    assert ds.items[0].answer == "18" and ds.items[0].checker == "numeric"
    assert all(i.answer.lstrip("-").replace(".", "", 1).isdigit() for i in ds.items)


@pytest.mark.realdata
def test_real_humaneval():
    ds, warnings = import_humaneval(_real("humaneval/HumanEval.jsonl.gz"))
    assert (len(ds.items), warnings) == (164, [])
    assert {i.type for i in ds.items} == {"code"}
    assert ds.items[0].id == "HumanEval/0" and ds.items[0].meta["entry_point"] == "has_close_elements"
