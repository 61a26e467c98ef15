"""The API key never reaches disk or the terminal, and item text is data: never interpolated or executed.

The key sits in an environment variable named by ``provider.api_key_env``. Runs go to the simulated vendor
(direct HTTP and litellm), to a hostile endpoint that echoes the key back in its error messages (as real
vendors partly do), and to an unreachable one; then a resume and ``eval752-score``. Every byte written under
the output folder and the cache folder, and everything printed, is searched for the key.
"""
from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest
from aiohttp import web

from conftest import last_line, read_rows, run_cli, write_items

KEY = "sk-eval752-FAKE-7f3a9c1e5b2d4068a1c3e5f7091b2d4f"
ENV = {"EVAL752_SECRET_TEST_KEY": KEY}


class EchoingVendor:
    """An OpenAI-compatible endpoint that fails every request and quotes the bearer token in its error:
    401 for the first request of each item, then 500 (retried)."""

    def __init__(self) -> None:
        self.seen_keys: set[str] = set()
        self.loop = asyncio.new_event_loop()
        self.url = ""
        ready = threading.Event()

        async def chat(request: web.Request) -> web.Response:
            auth = request.headers.get("Authorization", "")
            self.seen_keys.add(auth.removeprefix("Bearer "))
            status = 401 if len(self.seen_keys) % 2 else 500
            return web.json_response({"error": {"message": f"Incorrect API key provided: {auth}. Token {auth[7:]} "
                                                           "is not valid here.", "type": "invalid_request_error"}},
                                     status=status)

        async def start() -> None:
            app = web.Application()
            app.router.add_post("/v1/chat/completions", chat)
            self.runner = web.AppRunner(app, access_log=None)
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1"
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(start())
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def echoing_vendor():
    v = EchoingVendor()
    yield v
    v.stop()


def assert_key_nowhere(*roots: Path, texts: list[str]) -> int:
    """Search every file under ``roots`` and every text; returns how many files were searched."""
    for t in texts:
        assert KEY not in t
    searched = 0
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                assert KEY.encode() not in data, path
                assert KEY.encode("utf-16-le") not in data, path
                searched += 1
    return searched


def _cache_dir() -> Path:
    return Path(os.environ["EVAL752_CACHE_DIR"])


def test_the_key_never_appears_on_disk_or_in_output(tmp_path, echoing_vendor):
    out = tmp_path / "out"
    base = ["dataset=quickstart", f"output_root={out}", "progress=false",
            "provider.api_key_env=EVAL752_SECRET_TEST_KEY"]
    printed: list[str] = []

    def cli(args, **kw):
        r = run_cli(args, cwd=tmp_path, env=ENV, **kw)
        printed.extend([r.stdout, r.stderr])
        return r

    http = cli(base)
    assert http.returncode == 0, http.stderr
    lite = cli(base + ["provider.transport=litellm"], timeout=180)
    assert lite.returncode == 0, lite.stderr

    # a vendor that quotes the key back in every error: direct HTTP and litellm
    hostile = ["provider=openai_compat", f"provider.api_base={echoing_vendor.url}", "provider.max_retries=1",
               "provider.backoff_base=0.01", "cache.enabled=true"]
    failing_runs = []
    for transport in ("http", "litellm"):
        r = cli(base + hostile + [f"provider.transport={transport}"], timeout=180)
        assert r.returncode == 0, r.stderr
        run_dir = Path(last_line(r.stdout))
        rows = read_rows(run_dir)
        assert {row["status"] for row in rows} == {"error"}
        assert all("***" in row["response"]["error"] for row in rows)
        failing_runs.append(run_dir)
    assert echoing_vendor.seen_keys == {KEY}  # the key was really sent, and really echoed

    # resume the failing run (every row retried, failing again), then re-score it
    again = cli([f"resume={failing_runs[0]}", "progress=false"])
    assert again.returncode == 0, again.stderr
    assert "failed or duplicate rows will be retried" in again.stderr
    for run_dir in (Path(last_line(http.stdout)), failing_runs[0]):
        r = run_cli([f"input={run_dir / 'results.jsonl'}", f"output_root={out}"], cwd=tmp_path,
                    env={**ENV, "EVAL752_ENTRY": "score"})
        printed.extend([r.stdout, r.stderr])
        assert r.returncode == 0, r.stderr

    # an unreachable endpoint: refused before any request, and the message names no key
    unreachable = cli(base + ["provider=openai_compat", "provider.api_base=http://127.0.0.1:9/v1"])
    assert unreachable.returncode == 2 and "cannot reach provider.api_base" in unreachable.stderr

    searched = assert_key_nowhere(out, tmp_path, _cache_dir(), texts=printed)
    assert searched > 20


HOSTILE_TEXTS = [
    "Compute {{ 7 * 7 }} and {% for x in range(3) %}{{ x }}{% endfor %}",
    "Where is ${oc.env:HOME} and ${now:%Y} and ${eval752_run_dir:a,b}?",
    "_target_: os.system\n_args_: ['touch PWNED']",
    "{question} {choices} {0} %(x)s $(touch PWNED) `touch PWNED`",
    "__import__('os').system('touch PWNED') ; ${oc.decode:'[1, 2]'}",
]


def test_item_text_is_data_never_interpolated_or_executed(tmp_path):
    items = [{"id": f"h{i}", "type": "freeform", "inputs": {"text": text}, "answer": text,
              "meta": {"note": text, "_target_": "os.system"}} for i, text in enumerate(HOSTILE_TEXTS)]
    items.append({"id": "${oc.env:HOME}", "type": "mcq_single", "inputs": {"text": HOSTILE_TEXTS[3]},
                  "choices": ["{question}", "${oc.env:HOME}"], "answer": "${oc.env:HOME}"})
    data = write_items(tmp_path / "hostile.jsonl", items)
    r = run_cli([f"dataset={data}", f"output_root={tmp_path / 'out'}", "progress=false",
                 "provider.sim.accuracy.freeform=1.0", "provider.sim.accuracy.mcq_single=1.0"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {row["item_id"]: row for row in read_rows(Path(last_line(r.stdout)))}
    assert set(rows) == {f"h{i}" for i in range(len(HOSTILE_TEXTS))} | {"${oc.env:HOME}"}
    for i, text in enumerate(HOSTILE_TEXTS):
        row = rows[f"h{i}"]
        assert row["request"]["messages"][-1]["content"] == text  # sent exactly as written
        assert row["status"] == "ok"
    mcq = rows["${oc.env:HOME}"]["request"]["messages"][-1]["content"]
    assert mcq.startswith(HOSTILE_TEXTS[3] + "\n\n") and "${oc.env:HOME}" in mcq and "{question}" in mcq
    assert rows["${oc.env:HOME}"]["status"] == "ok"
    home = os.environ.get("HOME", "/root")
    raw = (Path(last_line(r.stdout)) / "results.jsonl").read_text()
    assert "49" not in json.dumps([rows[f"h{i}"]["request"] for i in range(len(HOSTILE_TEXTS))])
    assert f'"{home}"' not in raw
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists()
