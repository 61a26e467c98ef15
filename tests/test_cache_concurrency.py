"""The response cache under concurrent processes and crashes: two writers on one file at once lose nothing,
a writer killed mid-write leaves a readable, consistent cache, and two eval752 runs can share one cache."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import last_line, run_cli, write_items
from eval752.providers.cache import ResponseCache

WRITER = """
import sys
from eval752.providers.cache import ResponseCache
path, tag, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cache = ResponseCache(path)
open(start, "a").close()
i = 0
while n < 0 or i < n:
    cache.put(f"{tag}-{i}", {"text": f"{tag} answer {i} " + "x" * 4000, "n": i})
    cache.put(f"shared-{i % 50}", {"text": f"shared {i % 50}", "n": i % 50})
    i += 1
cache.close()
print(i)
"""


def writer(path: Path, tag: str, n: int, start: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(n), str(start)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.01)


def test_two_processes_write_one_cache_at_once(tmp_path):
    db = tmp_path / "c" / "responses.sqlite"
    procs = [writer(db, tag, 400, tmp_path / f"started-{tag}") for tag in ("a", "b")]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == "400"
    cache = ResponseCache(db)
    assert len(cache) == 400 + 400 + 50
    for tag in ("a", "b"):
        for i in (0, 199, 399):
            assert cache.get(f"{tag}-{i}")["text"].startswith(f"{tag} answer {i} ")
    assert cache.get("shared-7") == {"text": "shared 7", "n": 7}
    cache.close()


def test_a_writer_killed_mid_write_leaves_a_readable_cache(tmp_path):
    db = tmp_path / "responses.sqlite"
    started = tmp_path / "started"
    victim = writer(db, "k", -1, started)  # writes until killed
    other = writer(db, "o", 300, tmp_path / "started-o")  # and another process alongside
    wait_for(started)
    end = time.monotonic() + 30
    while True:  # let it get well into its work, then kill it without warning
        try:
            with sqlite3.connect(db, timeout=30) as con:
                if con.execute("SELECT COUNT(*) FROM responses WHERE key LIKE 'k-%'").fetchone()[0] >= 200:
                    break
        except sqlite3.OperationalError:
            pass
        assert time.monotonic() < end
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    out, err = other.communicate(timeout=120)
    assert other.returncode == 0, err

    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    bodies = con.execute("SELECT key, body FROM responses").fetchall()
    con.close()
    assert all(json.loads(body)["text"] for _, body in bodies)  # every stored row is whole
    keys = {k for k, _ in bodies}
    written = sum(1 for k in keys if k.startswith("k-"))
    assert written >= 200 and {f"k-{i}" for i in range(written)} <= keys | {f"k-{written}"}
    assert {f"o-{i}" for i in range(300)} <= keys
    cache = ResponseCache(db)  # and it still takes writes
    cache.put("after", {"text": "fine"})
    assert cache.get("after") == {"text": "fine"} and cache.get("k-0")["n"] == 0
    cache.close()


def test_two_runs_sharing_a_cache_at_once(tmp_path):
    colours = ["red", "green", "blue", "grey"]
    data = write_items(tmp_path / "d.jsonl", [
        {"id": f"q{i}", "type": "mcq_single", "inputs": {"text": f"Question {i}?"}, "choices": colours,
         "answer": colours[i % 4]} for i in range(60)])
    cache = tmp_path / "shared-cache"
    args = [f"dataset={data}", f"output_root={tmp_path / 'out'}", "progress=false", f"cache.path={cache}",
            "provider.sim.latency_ms=5"]
    procs = [subprocess.Popen([sys.executable, "-m", "eval752.cli", *args], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    summaries = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        summaries.append(json.loads((Path(last_line(out)) / "summary.json").read_text()))
    assert summaries[0]["metrics"]["score"] == summaries[1]["metrics"]["score"]
    third = run_cli(args, cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    s3 = json.loads((Path(last_line(third.stdout)) / "summary.json").read_text())
    assert s3["run"]["requests_sent"] == 0 and s3["counts"]["cached"] == 60
    assert s3["metrics"]["score"] == summaries[0]["metrics"]["score"]
    assert len(ResponseCache(cache)) == 60
