"""Crash-safety soak: a run against the simulated vendor with every transient fault switched on, killed with
SIGKILL at seeded random moments and resumed each time, must end with exactly one row per item, none
duplicated, and the same metrics as a fault-free run of the same seed.

    python benchmarks/soak.py --items 20000 --kills 10 --seed 3

tests/test_soak.py runs the same code with 2,000 items and three kills.

``context_length`` is the one sim fault left out of the mix: it is a 400 (the vendor refusing the request
itself), never retried and, since fault draws depend only on the request and the attempt number, failed
again on every resume, so no run with it can match a fault-free one. tests/test_soak.py checks it apart.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TRANSIENT_FAULTS = ("rate_limit", "rate_limit_no_retry_after", "server_error", "bad_gateway", "service_unavailable",
                    "connection_reset", "hang", "malformed_json", "stream_cut", "empty_choices", "slow")
CHOICES = ["red", "green", "blue", "grey"]


def write_dataset(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            kind = i % 3
            if kind == 2:
                item = {"id": f"s{i:06d}", "type": "freeform", "inputs": {"text": f"Say the number {i}."},
                        "answer": str(i)}
            else:
                item = {"id": f"s{i:06d}", "type": "mcq_single",
                        "inputs": {"text": f"Soak question {i}: which colour?"}, "choices": CHOICES,
                        "answer": CHOICES[i % 4]}
            f.write(json.dumps(item) + "\n")
    return path


def fault_override(rate: float) -> str:
    rates = ",".join(f"{k}:{rate}" for k in TRANSIENT_FAULTS)
    return (f"provider.sim.behaviours=[{{name:faults,rates:{{{rates}}},retry_after_s:0,hang_s:2,slow_s:0.05}}]")


def base_args(data: Path, out: Path, seed: int, concurrency: int) -> list[str]:
    return [f"dataset={data}", f"output_root={out}", "progress=false", "cache.enabled=false",
            f"provider.sim.seed={seed}", f"provider.concurrency={concurrency}"]


def faulty_args(rate: float) -> list[str]:
    # hangs resolve by the (small) per-attempt timeout; generous retries so every row ends ok
    return [fault_override(rate), "provider.timeout=0.3", "provider.max_retries=10", "provider.backoff_base=0.01",
            "provider.backoff_max=0.05"]


def cli(args: list[str], cwd: Path, **kw: Any) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.Popen([sys.executable, "-m", "eval752.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def complete_lines(path: Path) -> int:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return data.count(b"\n")


def finish(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"eval752 exited {proc.returncode}:\n{err[-3000:]}")
    return out, err


def run_until(proc: subprocess.Popen, runs: Path, rows: int, timeout: float) -> Path | None:
    """Wait until some results.jsonl under ``runs`` has ``rows`` lines, then SIGKILL ``proc``.
    Returns the run directory, or None when the process finished first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = list(runs.glob("*/results.jsonl")) if runs.exists() else []
        if found and complete_lines(found[0]) >= rows:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
            return found[0].parent
        if proc.poll() is not None:
            return None
        time.sleep(0.01)
    proc.kill()
    raise TimeoutError(f"no {rows} rows within {timeout}s")


def ok_keys(run_dir: Path) -> set[tuple[str, int]]:
    keys = set()
    for line in (run_dir / "results.jsonl").read_bytes().split(b"\n"):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if row.get("status") == "ok":
            keys.add((row["item_id"], row["sample"]))
    return keys


def soak(work: Path, *, items: int = 2000, kills: int = 3, seed: int = 0, rate: float = 0.015,
         concurrency: int = 16, timeout: float = 600) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    data = write_dataset(work / "soak.jsonl", items)
    rng = random.Random(seed)
    moments = sorted(rng.sample(range(max(1, items // 20), max(2, items * 9 // 10)), kills))
    t0 = time.perf_counter()

    clean_root = work / "clean"
    out, _ = finish(cli(base_args(data, clean_root, seed, concurrency), work), timeout)
    clean_dir = Path(out.strip().splitlines()[-1])
    clean = json.loads((clean_dir / "summary.json").read_text())
    t_clean = time.perf_counter() - t0

    soak_root = work / "soak"
    args = base_args(data, soak_root, seed, concurrency) + faulty_args(rate)
    run_dir = run_until(cli(args, work), soak_root / "runs", moments[0], timeout)
    if run_dir is None:
        raise RuntimeError("the first run finished before its kill moment")
    killed_at = [moments[0]]
    resumes = []
    for moment in moments[1:] + [None]:
        before = ok_keys(run_dir)
        proc = cli([f"resume={run_dir}", "progress=false"], work)
        if moment is not None and run_until(proc, soak_root / "runs", moment, timeout) is not None:
            killed_at.append(moment)
            continue
        finish(proc, timeout)
        summary = json.loads((run_dir / "summary.json").read_text())
        resumes.append({"ok_before": len(before), "requests_sent": summary["run"]["requests_sent"]})
        break
    # a last resume retries any row that still failed (none expected with these retry settings)
    summary = json.loads((run_dir / "summary.json").read_text())
    extra = 0
    while summary["counts"]["failed"] and extra < 3:
        extra += 1
        finish(cli([f"resume={run_dir}", "progress=false"], work), timeout)
        summary = json.loads((run_dir / "summary.json").read_text())
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    keys = [(r["item_id"], r["sample"]) for r in rows]
    return {
        "items": items, "kills": len(killed_at), "killed_at_rows": killed_at, "extra_resumes": extra,
        "rows": len(rows), "unique_rows": len(set(keys)), "statuses": sorted({r["status"] for r in rows}),
        "attempts": summary["counts"]["attempts"], "retried_rows": sum(r["response"]["attempts"] > 1 for r in rows),
        "score": summary["metrics"]["score"], "clean_score": clean["metrics"]["score"],
        "by_type": summary["by_type"], "clean_by_type": clean["by_type"],
        "last_resume": resumes[-1] if resumes else None, "run_dir": str(run_dir),
        "seconds_clean": round(t_clean, 2), "seconds_total": round(time.perf_counter() - t0, 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, default=20000)
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rate", type=float, default=0.015, help="rate of each transient fault (11 of them)")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--workdir", type=Path, default=None)
    a = p.parse_args(argv)
    import tempfile

    work = a.workdir or Path(tempfile.mkdtemp(prefix="eval752-soak-"))
    r = soak(work, items=a.items, kills=a.kills, seed=a.seed, rate=a.rate, concurrency=a.concurrency)
    ok = (r["rows"] == r["unique_rows"] == a.items and r["statuses"] == ["ok"] and r["score"] == r["clean_score"])
    print(json.dumps({k: v for k, v in r.items() if not k.startswith(("by_type", "clean_by"))}, indent=2))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
