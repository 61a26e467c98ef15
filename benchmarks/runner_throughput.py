"""Requests per second through eval752 against a bare ``openai.AsyncOpenAI`` loop, same server, same run.

The simulated vendor runs in its own process (so the server's CPU is not the client's), on loopback. Each
client sends the same N prompts at concurrency C with the response cache off:

- bare:     openai.AsyncOpenAI + asyncio.Semaphore(C), nothing else;
- eval752:  the full ``eval752`` command (prompt building, retries, checking, results.jsonl appends,
            progress accounting) through its direct HTTP transport; the rate is taken over the runner's
            own time (start-up excluded; it is printed apart);
- litellm:  the same command with ``provider.transport=litellm``, for reference.

Target (issue 2): eval752 >= 0.7 x bare at C=64.

    python benchmarks/runner_throughput.py --requests 3000 --concurrency 64
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def start_server(answer_key: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "eval752.providers.sim.server", "--port", "0", "--answer-key", str(answer_key)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit(f"simulated vendor did not start: {url!r}")
    return proc, url


def make_dataset(folder: Path, n: int) -> Path:
    path = folder / "bench.jsonl"
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"b{i:06d}", "type": "mcq_single",
                                "inputs": {"text": f"Benchmark question {i}: which colour?"},
                                "choices": ["red", "green", "blue", "grey"], "answer": "blue"}) + "\n")
    return path


async def bare_loop(url: str, prompts: list[str], concurrency: int) -> float:
    import httpx
    import openai

    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0,
                                http_client=openai.DefaultAsyncHttpxClient(limits=limits))
    sem = asyncio.Semaphore(concurrency)

    async def one(p: str) -> None:
        async with sem:
            await client.chat.completions.create(model="sim-1", messages=[{"role": "user", "content": p}], seed=0)

    start = time.perf_counter()
    await asyncio.gather(*(one(p) for p in prompts))
    elapsed = time.perf_counter() - start
    await client.close()
    return len(prompts) / elapsed


def eval752_run(url: str, data: Path, out: Path, concurrency: int, transport: str) -> tuple[float, float]:
    args = [sys.executable, "-m", "eval752.cli", f"dataset={data}", "provider=openai_compat",
            "provider.model=openai/sim-1", f"provider.api_base={url}", f"provider.concurrency={concurrency}",
            f"provider.transport={transport}", "provider.seed=0", "cache.enabled=false", "progress=false",
            f"output_root={out}"]
    start = time.perf_counter()
    r = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "HYDRA_FULL_ERROR": "1"})
    wall = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"eval752 failed:\n{r.stderr[-3000:]}")
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["counts"]["failed"] == 0, summary["failed"]
    return summary["counts"]["rows"] / summary["run"]["seconds"], wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3, help="alternate bare/eval752 this many times; best of each")
    ap.add_argument("--litellm", action="store_true", help="also measure the litellm transport")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = make_dataset(folder, a.requests)
        proc, url = start_server(data)
        try:
            prompts = [f"Benchmark question {i}: which colour?\n\nA. red\nB. green\nC. blue\nD. grey\n\n"
                       "Answer with the letter of the correct option." for i in range(a.requests)]
            asyncio.run(bare_loop(url, prompts[:200], a.concurrency))  # warm the server
            bare, ours, walls = [], [], []
            for _ in range(a.rounds):
                bare.append(asyncio.run(bare_loop(url, prompts, a.concurrency)))
                rate, wall = eval752_run(url, data, folder / "out", a.concurrency, "http")
                ours.append(rate)
                walls.append(wall)
            lite = eval752_run(url, data, folder / "out", a.concurrency, "litellm")[0] if a.litellm else None
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    b, o = max(bare), max(ours)
    print(f"requests={a.requests} concurrency={a.concurrency} rounds={a.rounds} cores={os.cpu_count()}")
    print(f"bare openai.AsyncOpenAI loop : {b:8.1f} req/s   (rounds: {', '.join(f'{x:.0f}' for x in bare)})")
    print(f"eval752 (http transport)     : {o:8.1f} req/s   (rounds: {', '.join(f'{x:.0f}' for x in ours)}; "
          f"wall incl. start-up {min(walls):.2f}s)")
    print(f"ratio eval752 / bare         : {o / b:8.2f}   (target >= 0.70)")
    if lite is not None:
        print(f"eval752 (litellm transport)  : {lite:8.1f} req/s   ratio {lite / b:.2f}")


if __name__ == "__main__":
    main()
