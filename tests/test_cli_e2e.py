"""End to end through the ``eval752`` command against the simulated vendor over real HTTP on loopback."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import last_line, read_rows, run_cli, write_items

ACCURACY_ALL = ["provider.sim.accuracy.{t}={p}".format(t=t, p=1.0)
                for t in ("mcq_single", "mcq_multi", "freeform", "code", "judge_pairwise", "default")]


def accuracy(**per_type: float) -> list[str]:
    return [f"provider.sim.accuracy.{t}={p}" for t, p in per_type.items()]


def test_quickstart_recipe_runs_end_to_end(tmp_path):
    r = run_cli(["recipe=quickstart", f"output_root={tmp_path}", "progress=false"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    assert run_dir.parent == tmp_path / "runs" and run_dir.name.endswith("_quickstart")
    for name in ("results.jsonl", "summary.json", "manifest.json", ".hydra/config.yaml", ".hydra/overrides.yaml"):
        assert (run_dir / name).is_file(), name
    rows = read_rows(run_dir)
    assert len(rows) == 12 and {r["status"] for r in rows} == {"ok"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["counts"] == {"rows": 12, "ok": 12, "failed": 0, "cached": 0}
    assert len(manifest["dataset"]["version_hash"]) == 64 and len(manifest["config_hash"]) == 64
    assert manifest["versions"]["eval752"] and manifest["versions"]["hydra-core"].startswith("1.3")
    assert "score" in r.stdout and "95% CI" in r.stdout


def test_mixed_dataset_exact_scores_per_type(tmp_path):
    # mcq_single always right, mcq_multi always wrong, freeform always right: 4 + 0 + 6 out of 12.
    args = ["dataset=quickstart", f"output_root={tmp_path}", "progress=false",
            *accuracy(mcq_single=1.0, mcq_multi=0.0, freeform=1.0)]
    r = run_cli(args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["metrics"]["score"]["value"] == pytest.approx(10 / 12, abs=1e-6)
    assert summary["metrics"]["score"]["num"] == 12
    assert summary["by_type"]["mcq_single"]["score"]["value"] == 1.0
    assert summary["by_type"]["mcq_multi"]["score"]["value"] == 0.0
    assert summary["by_type"]["freeform"]["score"]["value"] == 1.0
    assert summary["metrics"]["no_answer_rate"] == {"value": 0.0, "num": 6, "ci95": [0.0, 0.390334]}
    rows = {r["item_id"]: r for r in read_rows(run_dir)}
    assert rows["qs-num-1"]["checker"] == "numeric" and rows["qs-num-1"]["verdict"]["passed"] is True
    assert rows["qs-regex-1"]["checker"] == "regex"
    assert rows["qs-multi-1"]["verdict"]["score"] == 0.0 and rows["qs-multi-1"]["verdict"]["reason"]


def test_samples_and_pass_at_k(tmp_path):
    r = run_cli(["dataset=mmlu_sample", "samples=3", f"output_root={tmp_path}", "progress=false",
                 *accuracy(mcq_single=0.5)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    rows = read_rows(run_dir)
    assert len(rows) == 60 and len({(r["item_id"], r["sample"]) for r in rows}) == 60
    # each sample is asked with its own seed, so the three samples of an item can differ
    assert sorted({r["request"]["params"]["seed"] for r in rows}) == [0, 1, 2]
    summary = json.loads((run_dir / "summary.json").read_text())
    per_item: dict[str, list[float]] = {}
    for row in rows:
        per_item.setdefault(row["item_id"], []).append(row["verdict"]["score"])
    expected_p1 = sum(sum(v) / 3 for v in per_item.values()) / 20
    expected_p3 = sum(1.0 if any(v) else 0.0 for v in per_item.values()) / 20
    assert summary["metrics"]["pass@1"]["value"] == pytest.approx(expected_p1, abs=1e-6)
    assert summary["metrics"]["pass@3"]["value"] == pytest.approx(expected_p3, abs=1e-6)
    assert summary["metrics"]["pass@3"]["num"] == 20


def test_reproduce_gives_identical_summary(tmp_path):
    first = run_cli(["dataset=mmlu_sample", f"output_root={tmp_path}", "progress=false", "cache.enabled=false"],
                    cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run1 = Path(last_line(first.stdout))
    second = run_cli([f"reproduce={run1}", "progress=false"], cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    run2 = Path(last_line(second.stdout))
    assert run2 != run1 and run2.parent == run1.parent
    s1 = json.loads((run1 / "summary.json").read_text())
    s2 = json.loads((run2 / "summary.json").read_text())
    for key in ("metrics", "by_type", "by_section", "counts", "failed"):
        assert s1[key] == s2[key], key
    m1 = json.loads((run1 / "manifest.json").read_text())
    m2 = json.loads((run2 / "manifest.json").read_text())
    assert m1["config_hash"] == m2["config_hash"]
    assert m1["dataset"]["version_hash"] == m2["dataset"]["version_hash"]


def _many_items(n: int) -> list[dict]:
    return [{"id": f"q{i:04d}", "type": "mcq_single", "inputs": {"text": f"Question number {i}: pick one."},
             "choices": ["red", "green", "blue", "grey"], "answer": ["red", "green", "blue", "grey"][i % 4]}
            for i in range(n)]


def test_resume_after_sigkill_loses_and_duplicates_nothing(tmp_path):
    data = write_items(tmp_path / "many.jsonl", _many_items(200))
    args = [f"dataset={data}", f"output_root={tmp_path}", "progress=false", "provider.concurrency=4",
            "provider.sim.latency_ms=15", "cache.enabled=false"]
    env = {**os.environ}
    proc = subprocess.Popen([sys.executable, "-m", "eval752.cli", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    results = None
    while time.time() < deadline:
        found = list((tmp_path / "runs").glob("*/results.jsonl")) if (tmp_path / "runs").exists() else []
        if found and found[0].read_text().count("\n") >= 40:
            results = found[0]
            break
        time.sleep(0.05)
    assert results is not None, "run never got going"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    run_dir = results.parent
    partial = read_rows(run_dir) if results.read_bytes().endswith(b"\n") else None
    done_before = len(partial) if partial is not None else None
    assert done_before is None or 40 <= done_before < 200

    r = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert Path(last_line(r.stdout)) == run_dir
    rows = read_rows(run_dir)
    keys = [(row["item_id"], row["sample"]) for row in rows]
    assert len(rows) == 200 and len(set(keys)) == 200
    assert {row["status"] for row in rows} == {"ok"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["counts"]["rows"] == 200

    again = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["run"]["requests_sent"] == 0 and len(read_rows(run_dir)) == 200


def test_resume_repairs_a_partial_last_line(tmp_path):
    r = run_cli(["dataset=mmlu_sample", f"output_root={tmp_path}", "progress=false"], cwd=tmp_path)
    run_dir = Path(last_line(r.stdout))
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:7]) + lines[7][:25])
    r2 = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    assert "removed a partial last line" in r2.stderr
    rows = read_rows(run_dir)
    assert len(rows) == 20 and len({row["item_id"] for row in rows}) == 20


def test_cache_makes_a_repeat_run_free(tmp_path):
    args = ["dataset=mmlu_sample", f"output_root={tmp_path}", "progress=false"]
    first = run_cli(args, cwd=tmp_path)
    second = run_cli(args, cwd=tmp_path)
    assert first.returncode == second.returncode == 0
    s1 = json.loads((Path(last_line(first.stdout)) / "summary.json").read_text())
    s2 = json.loads((Path(last_line(second.stdout)) / "summary.json").read_text())
    assert s1["counts"]["cached"] == 0 and s2["counts"]["cached"] == 20
    assert s2["run"]["requests_sent"] == 0
    assert s1["metrics"]["score"] == s2["metrics"]["score"]


def test_litellm_transport_against_the_simulated_vendor(tmp_path):
    args = ["dataset=quickstart", f"output_root={tmp_path}", "progress=false", "provider.transport=litellm",
            *accuracy(mcq_single=1.0, mcq_multi=1.0, freeform=1.0)]
    r = run_cli(args, cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    summary = json.loads((Path(last_line(r.stdout)) / "summary.json").read_text())
    assert summary["metrics"]["score"]["value"] == 1.0 and summary["counts"]["ok"] == 12


def test_streaming_gives_the_same_scores(tmp_path):
    base = ["dataset=quickstart", f"output_root={tmp_path}", "progress=false", "cache.enabled=false"]
    a = run_cli(base, cwd=tmp_path)
    b = run_cli(base + ["provider.stream=true"], cwd=tmp_path)
    sa = json.loads((Path(last_line(a.stdout)) / "summary.json").read_text())
    sb = json.loads((Path(last_line(b.stdout)) / "summary.json").read_text())
    assert sa["metrics"] == sb["metrics"]


def test_dataset_path_shorthand_and_cfg_job(tmp_path):
    data = write_items(tmp_path / "mine.jsonl", _many_items(3))
    r = run_cli([f"dataset={data}", "--cfg", "job", "--resolve"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"path: {data}" in r.stdout and "name: mine" in r.stdout


def test_help_does_not_import_litellm(tmp_path):
    code = ("import sys; from eval752.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'litellm' not in sys.modules, 'litellm imported'\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "eval752" in r.stdout or "Powered by Hydra" in r.stdout


# ---- bad input: one clear message, exit status 2, no traceback -------------------------------------------

def _assert_clean_error(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def test_malformed_dataset_lists_every_problem(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "type": "mcq_single", "inputs": {"text": "q"}, "choices": ["x", "y"], "answer": "z"}\n'
        '{"id": "b", "type": "freeform", "inputs": {}}\n'
        "{not json\n"
    )
    r = run_cli([f"dataset={bad}", f"output_root={tmp_path}"], cwd=tmp_path)
    _assert_clean_error(r, f"{bad}:1: answer:", f"{bad}:2: inputs.text:", f"{bad}:3: -:")
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").glob("*/results.jsonl"))


def test_missing_api_key_names_the_variable(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    r = subprocess.run([sys.executable, "-m", "eval752.cli", "provider=openai", f"output_root={tmp_path}"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    _assert_clean_error(r, "OPENAI_API_KEY")


def test_unreachable_api_base(tmp_path):
    r = run_cli(["provider=openai_compat", "provider.api_base=http://127.0.0.1:9/v1", f"output_root={tmp_path}"],
                cwd=tmp_path)
    _assert_clean_error(r, "cannot reach provider.api_base http://127.0.0.1:9/v1")


def test_bad_overrides(tmp_path):
    _assert_clean_error(run_cli(["provider.temprature=0.5"], cwd=tmp_path), "did you mean 'temperature'?")
    _assert_clean_error(run_cli(["provider=opneai"], cwd=tmp_path), "did you mean 'openai'?")
    _assert_clean_error(run_cli(["recipe=quikstart"], cwd=tmp_path), "did you mean 'quickstart'?")
    _assert_clean_error(run_cli(["provider.concurrency=lots"], cwd=tmp_path), "provider.concurrency")
    _assert_clean_error(run_cli(["samples=0", f"output_root={tmp_path}"], cwd=tmp_path), "samples must be >= 1")
    _assert_clean_error(run_cli(["provider.temperature=[1"], cwd=tmp_path))


def test_images_need_a_vision_provider(tmp_path):
    root = tmp_path / "vis"
    (root / "sections").mkdir(parents=True)
    (root / "assets").mkdir()
    (root / "assets" / "dot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    write_items(root / "sections" / "main.jsonl", [
        {"id": "v1", "type": "freeform", "inputs": {"text": "What is shown?", "images": ["dot.png"]}, "answer": "dot"},
        {"id": "t1", "type": "freeform", "inputs": {"text": "Say dot."}, "answer": "dot"},
    ])
    r = run_cli([f"dataset={root}", f"output_root={tmp_path}"], cwd=tmp_path)
    _assert_clean_error(r, "provider.vision=false", "v1")
    ok = run_cli([f"dataset={root}", f"output_root={tmp_path}", "provider.vision=true", "progress=false"],
                 cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    rows = {r["item_id"]: r for r in read_rows(Path(last_line(ok.stdout)))}
    parts = rows["v1"]["request"]["messages"][0]["content"]
    assert parts[0] == {"type": "text", "text": "What is shown?"}
    assert parts[1] == {"type": "image_url", "image_url": {"url": "<image omitted>"}}


def test_no_secret_reaches_disk(tmp_path):
    secret = "sk-eval752-TEST-SECRET-0123456789"
    env = {"EVAL752_TEST_KEY": secret}
    r = run_cli(["dataset=quickstart", f"output_root={tmp_path}", "progress=false",
                 "provider.api_key_env=EVAL752_TEST_KEY"], cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert secret not in r.stdout + r.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    cache_dir = Path(os.environ["EVAL752_CACHE_DIR"])
    for path in cache_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


# ---- retries, interruption, packaging ---------------------------------------------------------------------

def test_transient_faults_are_retried_and_invalid_requests_are_not(tmp_path):
    faults = ("provider.sim.behaviours=[{name:rate_limit,rate:0.3,retry_after_s:0},"
              "{name:server_error,rate:0.2}]")
    r = run_cli(["dataset=mmlu_sample", f"output_root={tmp_path}", "progress=false", "provider.backoff_base=0.01",
                 "cache.enabled=false", faults, *accuracy(mcq_single=1.0)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    rows = read_rows(run_dir)
    assert len(rows) == 20 and {row["status"] for row in rows} == {"ok"}
    attempts = [row["response"]["attempts"] for row in rows]
    assert max(attempts) > 1 and sum(attempts) > 20
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["metrics"]["score"]["value"] == 1.0
    assert summary["counts"]["attempts"] == sum(attempts)

    # a 400 (context length) is the vendor refusing the request itself: one attempt, recorded, counted
    hard = run_cli(["dataset=mmlu_sample", f"output_root={tmp_path}", "progress=false", "cache.enabled=false",
                    "provider.sim.behaviours=[{name:context_length,rate:1.0}]"], cwd=tmp_path)
    assert hard.returncode == 0, hard.stderr
    run_dir = Path(last_line(hard.stdout))
    rows = read_rows(run_dir)
    assert {row["status"] for row in rows} == {"error"}
    assert {row["response"]["attempts"] for row in rows} == {1}
    assert all(row["response"]["error"].startswith("HTTP 400") for row in rows)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["metrics"]["score"] == {"value": 0.0, "num": 20, "ci95": [0.0, 0.161125],
                                           "failures": "counted as wrong"}
    assert summary["metrics"]["score_answered"] == {"value": None, "num": 0, "failures": "excluded"}
    assert summary["counts"]["failed"] == 20 and summary["failed"]["count"] == 20


def test_ctrl_c_stops_cleanly_and_resume_finishes(tmp_path):
    data = write_items(tmp_path / "many.jsonl", _many_items(120))
    args = [f"dataset={data}", f"output_root={tmp_path}", "progress=false", "provider.concurrency=2",
            "provider.sim.latency_ms=20", "cache.enabled=false"]
    proc = subprocess.Popen([sys.executable, "-m", "eval752.cli", *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        found = list((tmp_path / "runs").glob("*/results.jsonl")) if (tmp_path / "runs").exists() else []
        if found and found[0].read_text().count("\n") >= 10:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "resume with" in err and "Traceback" not in err
    run_dir = Path(last_line(out))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and 10 <= manifest["counts"]["rows"] < 120
    r = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = read_rows(run_dir)
    assert len(rows) == 120 and len({row["item_id"] for row in rows}) == 120


def test_installed_wheel_finds_its_configs(tmp_path):
    """Build the wheel and run it from outside the checkout: the configs must come from the package."""
    root = Path(__file__).resolve().parents[1]
    wheels = tmp_path / "wheels"
    b = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(root)],
                       capture_output=True, text=True, timeout=300)
    assert b.returncode == 0, b.stderr
    wheel = next(wheels.glob("eval752-*.whl"))
    target = tmp_path / "site"
    i = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                        str(wheel)], capture_output=True, text=True, timeout=300)
    assert i.returncode == 0, i.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = ("import eval752.cli as c, sys; print(c.__file__); print(c.config_dirs()[0]); "
            "sys.argv=['eval752','recipe=quickstart','progress=false']; c.main()")
    r = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(str(target)) and lines[1] == str(target / "eval752" / "_conf")
    run_dir = Path(last_line(r.stdout))
    assert run_dir.is_relative_to(work / "outputs" / "runs") and (run_dir / "summary.json").is_file()


def test_chat_rows_run_live_with_their_earlier_turns(tmp_path):
    rows = tmp_path / "chat.jsonl"
    rows.write_text(json.dumps({"id": "c1", "ref_answer": "Tokyo", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Blue."}, {"role": "user", "content": "What is the capital of Japan?"}]})
        + "\n")
    r = run_cli([f"dataset={rows}", "dataset.format=chat", f"output_root={tmp_path}", "progress=false",
                 *accuracy(freeform=1.0)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    row = read_rows(Path(last_line(r.stdout)))[0]
    assert [m["role"] for m in row["request"]["messages"]] == ["system", "user", "assistant", "user"]
    assert row["request"]["messages"][-1]["content"] == "What is the capital of Japan?"
    assert row["verdict"]["passed"] is True
