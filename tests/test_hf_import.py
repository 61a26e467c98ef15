"""``eval752-import``: tabular datasets through the ``datasets`` library and a column mapping (offline)."""
from __future__ import annotations

import gzip
import json
import shutil
import struct
import zlib
from pathlib import Path

import pytest

pytest.importorskip("datasets", reason="eval752-import needs the datasets library (pip install 'eval752[hf]')")

from eval752.datasets import import_gsm8k, import_mmlu, load_dataset  # noqa: E402
from eval752.hf_import import main as import_main  # noqa: E402

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))


def realdata(*parts: str) -> Path:
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    return path


def run_import(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        import_main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A tiny solid-colour PNG, written by hand."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_realdata_mmlu_through_the_mapping(tmp_path, capsys):
    src = realdata("mmlu", "mmlu.jsonl.gz")
    local = tmp_path / "mmlu.jsonl"
    with gzip.open(src, "rb") as f, open(local, "wb") as out:
        shutil.copyfileobj(f, out)
    code, out, err = run_import([str(local), "--mapping", "mmlu", "-o", str(tmp_path / "mmlu")], capsys)
    assert code == 0, err
    assert err.splitlines() == [
        "eval752-import: warning: row 11777: correct_answer: expected a letter A-D, got 'answer'; row skipped",
        "eval752-import: warning: row 12794: correct_answer: expected a letter A-D, got 'answer'; row skipped",
    ]
    dataset = load_dataset(tmp_path / "mmlu")
    assert len(dataset.items) == 14042 and len(dataset.sections) == 57
    assert out.splitlines()[0] == (f"imported 14042 items in 57 sections from 14044 rows (2 skipped), "
                                   f"version {dataset.version_hash}")
    # the same items as eval752's own MMLU importer gives
    native, _ = import_mmlu(src)
    assert dataset.version_hash == native.version_hash
    first = dataset.items[0]
    assert first.type == "mcq_single" and len(first.choices) == 4 and first.answer in first.choices


def test_realdata_gsm8k_through_the_mapping(tmp_path, capsys):
    src = realdata("gsm8k", "test.jsonl")
    code, out, err = run_import([str(src), "--mapping", "gsm8k", "-o", str(tmp_path / "gsm8k")], capsys)
    assert code == 0, err
    dataset = load_dataset(tmp_path / "gsm8k")
    assert len(dataset.items) == 1319 and dataset.sections == ("test",) and err == ""
    assert dataset.items[0].answer == "18" and dataset.items[0].checker == "numeric"
    native, _ = import_gsm8k(src)
    assert dataset.version_hash == native.version_hash


def test_preview_and_split_slicing(tmp_path, capsys):
    src = tmp_path / "he.jsonl"
    src.write_text("".join(json.dumps({"task_id": f"T/{i}", "prompt": f"def f{i}():\n", "entry_point": f"f{i}",
                                       "canonical_solution": "    return 1\n", "test": "def check(c): pass\n"})
                           + "\n" for i in range(5)))
    code, out, err = run_import([str(src), "--mapping", "humaneval", "--split", "train[:2]", "--preview"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:7] == ["features:", "  task_id: Value('string')", "  prompt: Value('string')",
                         "  entry_point: Value('string')", "  canonical_solution: Value('string')",
                         "  test: Value('string')", "rows: 2"]
    assert json.loads(lines[7])["id"] == "T/0" and json.loads(lines[8])["checker"] == "code"
    assert len(lines) == 9 and not (tmp_path / "out").exists()
    code, out, err = run_import([str(src), "--mapping", "humaneval", "--split", "train[:3]", "-o",
                                 str(tmp_path / "out")], capsys)
    assert code == 0 and [i.id for i in load_dataset(tmp_path / "out").items] == ["T/0", "T/1", "T/2"]


def test_missing_column_names_the_available_ones(tmp_path, capsys):
    src = tmp_path / "rows.csv"
    src.write_text("question,reply\nWhat is 2+2?,4\n")
    code, _, err = run_import([str(src), "--prompt", "questoin", "--answer", "reply", "-o", str(tmp_path / "o")],
                              capsys)
    assert code == 2
    assert err == ("eval752-import: error: column 'questoin' is not in the dataset; "
                   "available columns: question, reply\n")


def test_hub_needs_permission(tmp_path, capsys):
    code, _, err = run_import(["cais/mmlu", "--mapping", "mmlu", "-o", str(tmp_path / "o")], capsys)
    assert code == 2
    assert err == ("eval752-import: error: 'cais/mmlu' is not a local file; to download it from the Hugging Face "
                   "Hub pass --allow-hub\n")


def test_csv_with_letter_index_criteria_and_meta(tmp_path, capsys):
    src = tmp_path / "quiz.csv"
    src.write_text("q,A,B,C,gold,rubric,level\n"
                   "Pick red,red,blue,green,0,colour,easy\n"
                   "Pick green,red,blue,green,2,colour,hard\n"
                   "Pick none,red,blue,green,7,colour,hard\n")
    code, out, err = run_import([str(src), "--prompt", "q", "--type", "mcq_single", "--choices", "A,B,C",
                                 "--answer", "gold", "--answer-format", "index", "--criteria", "rubric",
                                 "--meta", "level", "--section", "colours", "-o", str(tmp_path / "quiz")], capsys)
    assert code == 0, err
    assert err == "eval752-import: warning: row 3: gold: expected an index 0-2, got 7; row skipped\n"
    items = load_dataset(tmp_path / "quiz").items
    assert [(i.id, i.answer, i.criteria, dict(i.meta), i.section) for i in items] == [
        ("quiz-1", "red", "colour", {"level": "easy"}, "colours"),
        ("quiz-2", "green", "colour", {"level": "hard"}, "colours"),
    ]


def test_parquet_with_an_image_column(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    images = [png(2, 2, (255, 0, 0)), png(3, 1, (0, 0, 255))]
    features = {"question": {"dtype": "string", "_type": "Value"},
                "choices": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
                "label": {"dtype": "int64", "_type": "Value"}, "picture": {"_type": "Image"}}
    table = pa.table({
        "question": ["What colour is this?", "And this one?"],
        "choices": [["red", "blue"], ["red", "blue"]],
        "label": [0, 1],
        "picture": [{"bytes": data, "path": None} for data in images],
    })
    table = table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": features}})})
    pq.write_table(table, tmp_path / "colours.parquet")
    code, out, err = run_import([str(tmp_path / "colours.parquet"), "--prompt", "question", "--type", "mcq_single",
                                 "--choices", "choices", "--answer", "label", "--answer-format", "index",
                                 "--image", "picture", "-o", str(tmp_path / "colours")], capsys)
    assert code == 0, err
    dataset = load_dataset(tmp_path / "colours")
    assert [(i.id, i.images, i.answer) for i in dataset.items] == [
        ("colours-1", ("images/colours-1.png",), "red"), ("colours-2", ("images/colours-2.png",), "blue")]
    assert (tmp_path / "colours" / "assets" / "images" / "colours-1.png").read_bytes() == images[0]
    assert dataset.asset_path("images/colours-2.png").read_bytes() == images[1]
    assert dataset.items_needing_vision() == ["colours-1", "colours-2"]
