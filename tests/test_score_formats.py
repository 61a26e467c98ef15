"""``eval752-score`` end to end over the imported formats, through the command line as a user runs it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"


def run_score(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from eval752.cli import score_main; sys.argv[0] = 'eval752-score'; score_main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def out_dir(stdout: str) -> Path:
    return Path([line for line in stdout.splitlines() if line.strip()][-1])


def responses(*texts):
    return [{"content": t} for t in texts]


# Two models, three questions, n = 3 responses each. Scores (exact / choice checkers):
#   alpha: q1 [1,0,1]  q2 [1,1,1]  q3 [0,0,1]      beta: q1 [0,0,0]  q2 [1,0,0]  q3 [1,1,1]
EVAL_ONLY = [
    {"id": "q1", "prompt": "What is 2+2?", "answer": "4", "source": "arith", "model_outputs": [
        {"model_name": "alpha", "responses": responses("4", "5", "The answer is 4")},
        {"model_name": "beta", "responses": responses("3", "22", "five")}]},
    {"id": "q2", "question": "Capital of France?", "ref_answer": "Paris", "model_outputs": [
        {"model_name": "alpha", "responses": responses("Paris", "paris", "Paris.")},
        {"model_name": "beta", "responses": responses("Paris", "Lyon", "Marseille")}]},
    {"id": "q3", "prompt": "Closest planet to the Sun?", "choices": ["Venus", "Mercury", "Earth"], "answer": "Mercury",
     "model_outputs": [
        {"model_name": "alpha", "responses": responses("A", "C", "B")},
        {"model_name": "beta", "responses": responses("B", "Answer: B", "Mercury")}]},
]


def test_eval_only_two_models_three_samples_end_to_end(tmp_path):
    src = tmp_path / "recorded.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in EVAL_ONLY))
    r = run_score([f"input={src}", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = out_dir(r.stdout)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == "eval_only"
    # alpha: mean 6/9; best-of-3 1; pass@1 = mean(2/3, 1, 1/3); pass@2 = mean(1, 1, 2/3); pass@3 = 1;
    #        per-sample-index means (2/3, 1/3, 1): sample std 1/3
    # beta:  mean 4/9; best-of-3 2/3; pass@1 = mean(0, 1/3, 1); pass@2 = mean(0, 2/3, 1); pass@3 = 2/3;
    #        per-sample-index means (2/3, 1/3, 1/3): sample std 0.19245
    assert summary["models"] == {
        "alpha": {
            "score": {"value": 0.666667, "num": 9, "ci95": [0.354202, 0.879416]},
            "best_of_n": {"value": 1.0, "num": 3, "n": 3},
            "pass@1": {"value": 0.666667, "num": 3, "ci95": [0.289471, 1.043862]},
            "pass@2": {"value": 0.888889, "num": 3, "ci95": [0.671115, 1.106663]},
            "pass@3": {"value": 1.0, "num": 3, "ci95": [1.0, 1.0]},
            "spread": {"value": 0.333333, "num": 3, "min": 0.333333, "max": 1.0,
                       "means": [0.666667, 0.333333, 1.0]},
        },
        "beta": {
            "score": {"value": 0.444444, "num": 9, "ci95": [0.188779, 0.733349]},
            "best_of_n": {"value": 0.666667, "num": 3, "n": 3},
            "pass@1": {"value": 0.444444, "num": 3, "ci95": [-0.131731, 1.02062]},
            "pass@2": {"value": 0.555556, "num": 3, "ci95": [-0.02062, 1.131731]},
            "pass@3": {"value": 0.666667, "num": 3, "ci95": [0.013345, 1.319988]},
            "spread": {"value": 0.19245, "num": 3, "min": 0.333333, "max": 0.666667,
                       "means": [0.666667, 0.333333, 0.333333]},
        },
    }
    assert summary["counts"]["rows"] == 18 and summary["counts"]["samples"] == 3
    assert summary["metrics"]["score"]["value"] == 0.555556
    table = r.stdout.splitlines()
    start = table.index("  per model:")
    assert table[start + 1:start + 4] == [
        "  model              score   best_of_n      pass@1      pass@2      pass@3      spread",
        "  alpha             0.6667      1.0000      0.6667      0.8889      1.0000      0.3333",
        "  beta              0.4444      0.6667      0.4444      0.5556      0.6667      0.1925",
    ]
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {(row["model"], row["checker"]) for row in rows} == {
        ("alpha", "exact"), ("alpha", "choice"), ("beta", "exact"), ("beta", "choice")}
    assert set(summary["diagnostics"]["groups"]) == {"alpha", "beta"}


def test_checker_override_and_named_format(tmp_path):
    src = tmp_path / "chat.jsonl"
    rows = [{"messages": [{"role": "user", "content": "6*7?"}, {"role": "assistant", "content": "It is 42.0"}],
             "ref_answer": "42"}]
    src.write_text("".join(json.dumps(x) + "\n" for x in rows))
    r = run_score([f"input={src}", "format=chat", "checker=numeric", "diagnostics.enabled=false",
                   f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    row = json.loads((out_dir(r.stdout) / "results.jsonl").read_text())
    assert (row["checker"], row["verdict"]["score"], row["verdict"]["extracted"]) == ("numeric", 1.0, 42.0)


def test_bad_files_exit_2_naming_file_and_line(tmp_path):
    src = tmp_path / "chat.jsonl"
    src.write_text(json.dumps({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                               "ref_answer": "a"}) + "\n" + json.dumps({"messages": "hello", "ref_answer": "a"}) + "\n")
    r = run_score([f"input={src}", "format=chat", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{src}:2: messages: expected a non-empty list of messages, got string" in r.stderr
    plain = tmp_path / "questions.csv"
    plain.write_text("prompt,answer\nWhat is 3+3?,6\n")
    r = run_score([f"input={plain}", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 2 and f"{plain}:1: response: no response column" in r.stderr
    r = run_score([f"input={src}", "format=chatt", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 2 and "format must be one of" in r.stderr and "eval_only" in r.stderr


def test_alpaca_eval_annotations_reproduce_the_leaderboard(tmp_path):
    path = REALDATA / "alpaca_eval" / "alpaca-7b.annotations.json.gz"
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    r = run_score([f"input={path}", "diagnostics.enabled=false", f"output_root={tmp_path}"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out_dir(r.stdout) / "summary.json").read_text())
    assert summary["format"] == "alpaca_annotations" and summary["baseline"] == "gpt4_1106_preview"
    m = summary["models"]["alpaca-7b"]
    assert m["win_rate"] == {"value": 2.591450540223603, "num": 805}
    assert abs(m["standard_error"]["value"] - 0.4870855382635108) < 1e-12
    assert (m["n_wins"]["value"], m["n_draws"]["value"]) == (17, 3)
