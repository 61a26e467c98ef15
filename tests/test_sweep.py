"""Sweeps through the ``eval752`` command: launchers, folder names, sweep.json, skip on relaunch, resume after a
kill, dry runs, and the leaderboard over a sweep. Simulated vendors only; the sim is deterministic."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import read_rows, run_cli, write_items
from eval752.sweep import _is_sweep_value, job_dir_name, sweep_overrides

GRID = ["dataset=mmlu_sample", "samples=5", "provider.sim.accuracy.mcq_single=0.9,0.5",
        "provider.temperature=0,0.7", "progress=false"]
NAMES = sorted(f"provider.sim.accuracy.mcq_single={a},provider.temperature={t}"
               for a in ("0.9", "0.5") for t in ("0", "0.7"))


def _sweep_dir(root: Path) -> Path:
    found = sorted((root / "sweeps").iterdir())
    assert len(found) == 1, found
    return found[0]


def _sweep_json(sweep_dir: Path) -> dict:
    return json.loads((sweep_dir / "sweep.json").read_text())


def test_sweep_names_and_ids():
    assert _is_sweep_value("0,0.7") and _is_sweep_value("range(0,3)") and not _is_sweep_value("[a,b]")
    assert not _is_sweep_value("'a,b'") and not _is_sweep_value("0.7")
    args = ["-m", "dataset=quickstart", "provider=sim,openai_compat", "provider.temperature=0,0.7", "progress=false"]
    out = sweep_overrides(args)
    assert out[0] == "sweep.vary=[provider,provider.temperature]" and out[1].startswith("sweep.id=sweep-")
    assert len(out[1]) == len("sweep.id=sweep-") + 10
    # the same command (in another order, another launcher, another output_root) names the same sweep
    again = sweep_overrides(["provider.temperature=0,0.7", "--multirun", "provider=sim,openai_compat",
                             "dataset=quickstart", "hydra/launcher=joblib", "output_root=/x", "progress=true"])
    assert again[1] == out[1] and again[0] == "sweep.vary=[provider.temperature,provider]"
    assert sweep_overrides(args + ["samples=2"]) != out
    assert sweep_overrides(["dataset=quickstart"]) == []  # a single run
    assert sweep_overrides(["sweep=decoding"])[-1].startswith("sweep.id=decoding-")
    assert sweep_overrides(["-m", "provider=a,b", "sweep.id=mine"]) == ["sweep.vary=[provider]"]
    task = ["dataset=quickstart", "provider=sim", "++provider.sim.accuracy.mcq_single=0.9", "provider.temperature=0"]
    assert job_dir_name(0, task, ["provider.sim.accuracy.mcq_single"], {"provider.temperature": "0,1"}) == \
        "provider.sim.accuracy.mcq_single=0.9,provider.temperature=0"
    assert job_dir_name(3, task, [], None) == "job3"
    assert job_dir_name(0, ["dataset.path=a/b.jsonl"], ["dataset.path"], None) == "dataset.path=a_b.jsonl"


def test_joblib_sweep_ranks_the_better_vendor_first_and_relaunch_sends_nothing(tmp_path, capsys):
    args = ["-m", *GRID, f"output_root={tmp_path}", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    r = run_cli(args, cwd=tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr
    sweep_dir = _sweep_dir(tmp_path)
    assert sweep_dir.name.startswith("sweep-")
    runs = sorted(p.name for p in sweep_dir.iterdir() if p.is_dir())
    assert runs == NAMES
    data = _sweep_json(sweep_dir)
    assert sorted(e["name"] for e in data["runs"]) == NAMES
    assert {e["status"] for e in data["runs"]} == {"complete"} and {e["requests_sent"] for e in data["runs"]} == {100}
    by_name = {e["name"]: e for e in data["runs"]}
    assert by_name[NAMES[2]]["metrics"]["score"] == {"value": 0.87, "num": 100}
    assert by_name[NAMES[0]]["metrics"]["score"] == {"value": 0.48, "num": 100}
    for name in NAMES:
        assert (sweep_dir / name / "report.html").is_file()
        assert len(read_rows(sweep_dir / name)) == 100

    out = tmp_path / "board"
    from eval752.report.cli import main as report_main

    assert report_main([str(sweep_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1] == f"report: {out / 'report.html'}" and printed[1].split()[-2:] == ["0.8700", "100"]
    with open(out / "leaderboard.csv") as f:
        board = list(csv.DictReader(f))
    assert [row["run"] for row in board[:2]] == [NAMES[2], NAMES[3]]  # accuracy 0.9 first
    assert [row["score"] for row in board] == ["0.87", "0.87", "0.48", "0.48"]
    assert (out / "leaderboard.md").read_text().startswith("| rank | run |")
    comps = json.loads((out / "comparisons.json").read_text())
    best_vs_worse = next(c for c in comps if c["a"] == NAMES[2] and c["b"] == NAMES[0])
    # 39 items right only with the 0.9 vendor, none only with the 0.5 one: p = 2 * 0.5**39
    assert best_vs_worse["test"] == "mcnemar_exact"
    assert (best_vs_worse["a_only_right"], best_vs_worse["b_only_right"]) == (39, 0)
    assert best_vs_worse["p_value"] == 2.0**-38 == 3.637978807091713e-12 and best_vs_worse["significant"]
    assert best_vs_worse["diff"] == 0.39 and best_vs_worse["ci95"] == [0.294403, 0.485597]
    same = next(c for c in comps if c["a"] == NAMES[2] and c["b"] == NAMES[3])
    assert same["p_value"] == 1.0 and same["differences"] == []
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "mcnemar_exact" in html and "<script src" not in html

    # the same command through the in-process launcher: the launcher is not part of the sweep's identity
    again = run_cli(args[:-2], cwd=tmp_path, timeout=240)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("skipped (already complete)") == 4
    data = _sweep_json(sweep_dir)
    assert {e["requests_sent"] for e in data["runs"]} == {0} and all(e["skipped"] for e in data["runs"])
    assert all(len(read_rows(sweep_dir / n)) == 100 for n in NAMES)


def test_submitit_local_sweep(tmp_path):
    args = ["-m", "dataset=quickstart", "provider.sim.accuracy.freeform=1.0,0.0", "progress=false",
            f"output_root={tmp_path}", "hydra/launcher=submitit_local"]
    r = run_cli(args, cwd=tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr
    sweep_dir = _sweep_dir(tmp_path)
    data = _sweep_json(sweep_dir)
    assert sorted(e["name"] for e in data["runs"]) == ["provider.sim.accuracy.freeform=0.0",
                                                       "provider.sim.accuracy.freeform=1.0"]
    assert {e["status"] for e in data["runs"]} == {"complete"}
    scores = {e["name"]: e["metrics"]["score"]["value"] for e in data["runs"]}
    assert scores["provider.sim.accuracy.freeform=1.0"] > scores["provider.sim.accuracy.freeform=0.0"]


def _many_items(n: int) -> list[dict]:
    return [{"id": f"q{i:04d}", "type": "mcq_single", "inputs": {"text": f"Question {i}: pick one."},
             "choices": ["red", "green", "blue", "grey"], "answer": ["red", "green", "blue", "grey"][i % 4]}
            for i in range(n)]


def _ok_lines(path: Path) -> int:
    if not path.exists():
        return 0
    data = path.read_bytes()
    lines = data[: data.rfind(b"\n") + 1].decode().splitlines()
    return len({json.loads(x)["item_id"] for x in lines if x.strip() and json.loads(x)["status"] == "ok"})


def test_killed_sweep_resumes_and_dry_run_counts_what_is_left(tmp_path):
    data = write_items(tmp_path / "many.jsonl", _many_items(100))
    args = ["-m", f"dataset={data}", "provider.sim.accuracy.mcq_single=0.9,0.5", "progress=false",
            "provider.concurrency=2", "provider.sim.latency_ms=20", "cache.enabled=false", f"output_root={tmp_path}"]
    proc = subprocess.Popen([sys.executable, "-m", "eval752.cli", *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = None
    deadline = time.time() + 90
    while time.time() < deadline:
        found = list(tmp_path.glob("sweeps/*/provider.sim.accuracy.mcq_single=0.9/results.jsonl"))
        if found and found[0].read_text().count("\n") >= 20:
            first = found[0]
            break
        time.sleep(0.05)
    assert first is not None, "the sweep never got going"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    sweep_dir = first.parent.parent
    done = _ok_lines(first)
    assert 20 <= done < 100
    assert _sweep_json(sweep_dir)["runs"][0]["status"] == "running"

    dry = run_cli(args + ["dry_run=true"], cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    left = 100 - done + 100
    assert f"dry run: sweep of 2 runs: {left} requests" in dry.stdout
    assert f"{100 - done} requests (of 100, {done} done)" in dry.stdout
    assert _ok_lines(first) == done  # a dry run sends nothing

    again = run_cli(args, cwd=tmp_path, timeout=240)
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    entries = {e["name"]: e for e in _sweep_json(sweep_dir)["runs"]}
    assert {e["status"] for e in entries.values()} == {"complete"}
    assert entries["provider.sim.accuracy.mcq_single=0.9"]["requests_sent"] == 100 - done
    assert entries["provider.sim.accuracy.mcq_single=0.5"]["requests_sent"] == 100
    for name in entries:
        rows = read_rows(sweep_dir / name)
        assert len(rows) == 100 and len({r["item_id"] for r in rows}) == 100


def test_dry_run_of_a_declared_sweep_is_exact_and_sends_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    r = subprocess.run([sys.executable, "-m", "eval752.cli", "sweep=models", "dataset=mmlu_sample", "samples=3",
                        "provider.max_tokens=50", "dry_run=true", f"output_root={tmp_path}"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith("dry run:")]
    assert len(lines) == 5 and all("60 requests (of 60, 0 done)" in x for x in lines[:4])
    assert lines[-1].startswith("dry run: sweep of 4 runs: 240 requests,") and "nothing was sent" in lines[-1]
    assert "provider=openai:" in r.stdout and "~$" in r.stdout  # litellm knows gpt-4o-mini's price
    assert not list(tmp_path.rglob("results.jsonl")) and not list(tmp_path.rglob("manifest.json"))
    single = run_cli(["dataset=quickstart", "samples=2", "dry_run=true", f"output_root={tmp_path}"], cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    assert "24 requests (of 24, 0 done)" in single.stdout
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
