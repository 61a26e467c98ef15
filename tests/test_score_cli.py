"""``eval752-score``: recorded outputs scored by the same checkers, plus streaming diagnostics."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import last_line, read_rows, run_cli


def run_score(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from eval752.cli import score_main; sys.argv[0] = 'eval752-score'; score_main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def test_rescoring_a_run_reproduces_its_summary(tmp_path):
    r = run_cli(["dataset=quickstart", f"output_root={tmp_path}", "progress=false"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    s = run_score([f"input={run_dir / 'results.jsonl'}", f"output_root={tmp_path}"], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    out = Path(last_line(s.stdout))
    assert out.parent == tmp_path / "scores"
    original = json.loads((run_dir / "summary.json").read_text())
    rescored = json.loads((out / "summary.json").read_text())
    assert rescored["format"] == "eval752"
    assert rescored["metrics"] == original["metrics"]
    assert rescored["by_type"] == original["by_type"]
    assert [r["verdict"] for r in read_rows(out)] == [r["verdict"] for r in read_rows(run_dir)]
    assert rescored["diagnostics"]["rows"] == 12


def test_rescoring_with_another_checker(tmp_path):
    r = run_cli(["dataset=quickstart", f"output_root={tmp_path}", "progress=false",
                 "provider.sim.accuracy.freeform=1.0"], cwd=tmp_path)
    run_dir = Path(last_line(r.stdout))
    s = run_score([f"input={run_dir / 'results.jsonl'}", f"output_root={tmp_path}", "checker=exact"], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rows = {row["item_id"]: row for row in read_rows(Path(last_line(s.stdout)))}
    assert {row["checker"] for row in rows.values()} == {"exact"}
    assert rows["qs-free-1"]["verdict"]["passed"] is True  # "Tokyo"
    assert rows["qs-mcq-1"]["verdict"]["passed"] is False  # a letter is not the option's text
    # a checker that cannot score some item is refused before anything is written
    bad = run_score([f"input={run_dir / 'results.jsonl'}", f"output_root={tmp_path}", "checker=numeric"], cwd=tmp_path)
    assert bad.returncode == 2 and "item 'qs-mcq-1': numeric reference 'Mercury' is not a number" in bad.stderr


def test_diagnostics_over_any_jsonl(tmp_path):
    rows = [
        {"id": "r1", "model": "m1", "output": "A clear and normal answer."},
        {"id": "r2", "model": "m1", "output": "a" * 12},
        {"id": "r3", "model": "m2", "output": "Ответ: да"},
        {"id": "r4", "model": "m2", "output": "aaaaaa"},
    ]
    src = tmp_path / "outputs.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    s = run_score([f"input={src}", "format=jsonl", f"output_root={tmp_path}", "diagnostics.text_fields=[output]",
                   "diagnostics.group_field=model", "diagnostics.id_field=id", "diagnostics.prompt_field=null",
                   "diagnostics.expected=en"], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    out = Path(last_line(s.stdout))
    flags = [json.loads(line) for line in (out / "diagnostics.jsonl").read_text().splitlines()]
    assert [f["repeat"] for f in flags] == [False, True, False, False]
    assert [f["cyrillic"] for f in flags] == [False, False, True, False]
    assert flags[1]["ngram"] == "aaa" and flags[1]["ngram_count"] == 4
    assert [f["leak"] for f in flags] == [False, False, True, False]
    summary = json.loads((out / "diagnostics.json").read_text())
    assert summary["groups"]["m1"]["rows"] == 2 and summary["groups"]["m2"]["rows"] == 2


def test_bad_input_is_a_clear_error(tmp_path):
    missing = run_score([f"input={tmp_path / 'nope.jsonl'}", f"output_root={tmp_path}"], cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"ok": 1}\n{broken\n')
    r = run_score([f"input={bad}", "format=jsonl", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 2 and f"{bad}:2" in r.stderr and "Traceback" not in r.stderr
    orphan = tmp_path / "orphan.jsonl"
    orphan.write_text(json.dumps({"item_id": "x", "sample": 0, "response": {}, "status": "ok"}) + "\n")
    r = run_score([f"input={orphan}", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 2 and "not inside an eval752 run directory" in r.stderr
