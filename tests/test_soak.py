"""Failure handling under the simulated vendor's faults: adaptive concurrency (AIMD), the per-request deadline,
failed rows recorded and counted, resume retrying only what failed, and the crash-safety soak."""
from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from conftest import ROOT, last_line, read_rows, run_cli, write_items
from eval752.config import ProviderConfig
from eval752.providers.adaptive import OK, OTHER, THROTTLED, AdaptiveLimiter
from eval752.providers.provider import Provider, RateLimiter
from eval752.providers.retry import CallError
from eval752.types import Request

# ---- AdaptiveLimiter: deterministic, from fake events ------------------------------------------------------


def test_a_burst_of_429s_halves_once_and_sustained_429s_halve_down_to_one():
    lim = AdaptiveLimiter(16)

    async def go():
        burst = [await lim.acquire() for _ in range(16)]
        for slot in burst:  # sixteen 429s from requests sent together: one decrease
            lim.release(slot, THROTTLED)
        assert (lim.limit, lim.decreases) == (8, 1)
        seen = []
        for _ in range(5):  # each later 429 comes from a request admitted after the last decrease
            lim.release(await lim.acquire(), THROTTLED)
            seen.append(lim.limit)
        assert seen == [4, 2, 1, 1, 1]
        assert (lim.lowest, lim.decreases, lim.in_flight) == (1, 4, 0)

    asyncio.run(go())


def test_successes_recover_additively_up_to_the_ceiling():
    lim = AdaptiveLimiter(4)
    lim.limit = 1
    trace = []

    async def go():
        for _ in range(12):
            lim.release(await lim.acquire(), OK)
            trace.append(lim.limit)

    asyncio.run(go())
    # +1 after `limit` successes: 1 -> 2 after one, -> 3 after two more, -> 4 after three more, then capped
    assert trace == [2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4]
    assert lim.increases == 3


def test_other_failures_leave_the_limit_alone_and_a_429_resets_the_recovery():
    lim = AdaptiveLimiter(8)
    lim.limit = 4

    async def go():
        for _ in range(10):
            lim.release(await lim.acquire(), OTHER)
        assert lim.limit == 4
        for _ in range(3):
            lim.release(await lim.acquire(), OK)
        lim.release(await lim.acquire(), THROTTLED)
        assert lim.limit == 2
        lim.release(await lim.acquire(), OK)
        assert lim.limit == 2  # the three successes before the 429 do not count
        lim.release(await lim.acquire(), OK)
        assert lim.limit == 3

    asyncio.run(go())


def test_acquire_waits_while_the_limit_is_reached():
    lim = AdaptiveLimiter(4)
    lim.limit = 2

    async def go():
        a, b = await lim.acquire(), await lim.acquire()
        third = asyncio.create_task(lim.acquire())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not third.done() and lim.in_flight == 2
        lim.release(a, OK)
        slot = await asyncio.wait_for(third, 5)
        assert lim.in_flight == 2
        lim.release(b, OK)
        lim.release(slot, OK)

    asyncio.run(go())


def test_disabled_limiter_admits_up_to_the_ceiling_and_never_adapts():
    lim = AdaptiveLimiter(3, enabled=False)

    async def go():
        slots = [await lim.acquire() for _ in range(3)]
        for s in slots:
            lim.release(s, THROTTLED)

    asyncio.run(go())
    assert (lim.limit, lim.decreases) == (3, 0)
    with pytest.raises(ValueError, match="1 <= floor <= ceiling"):
        AdaptiveLimiter(0)


# ---- Provider.complete with a fake transport: deadline, retries, adaptive concurrency ----------------------


class FakeTransport:
    """Answers from a script: each call pops the next action ('ok', 'hang', or a CallError)."""

    def __init__(self, script, provider=None):
        self.script = list(script)
        self.calls = 0
        self.provider = provider
        self.in_flight = 0
        self.peak_after_throttle = 0

    async def send(self, body, headers):
        self.calls += 1
        action = self.script.pop(0) if self.script else "ok"
        if action == "hang":
            await asyncio.Event().wait()
        self.in_flight += 1
        if self.provider is not None and self.provider.adaptive.decreases:
            self.peak_after_throttle = max(self.peak_after_throttle, self.in_flight)
        try:
            await asyncio.sleep(0)
            if isinstance(action, CallError):
                raise action
            return {"choices": [{"message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]}
        finally:
            self.in_flight -= 1


def make_provider(transport_script, **cfg) -> tuple[Provider, FakeTransport]:
    p = Provider(ProviderConfig(name="fake", model="fake/model", track_cost=False, **cfg))
    t = FakeTransport(transport_script, p)
    p.transport, p._limiter = t, RateLimiter(None)
    return p, t


def req(i: int = 0) -> Request:
    return Request(item_id=f"i{i}", sample=0, messages=({"role": "user", "content": "q"},), params={})


def test_deadline_bounds_a_hanging_attempt_below_the_timeout():
    p, t = make_provider(["hang"], timeout=60.0, deadline=0.2)
    r = asyncio.run(p.complete(req()))
    assert r.error == "deadline of 0.2s exceeded after 1 attempt" and r.attempts == 1 and t.calls == 1


def test_deadline_stops_retrying_when_the_next_wait_would_pass_it():
    err = CallError("Rate limit reached; try again in 30s.", status=429, retry_after=30)
    p, t = make_provider([err, err], timeout=60.0, deadline=5.0, backoff_max=60.0)
    r = asyncio.run(p.complete(req()))
    assert r.error == ("deadline of 5s exceeded after 1 attempt "
                       "(last error: HTTP 429: Rate limit reached; try again in 30s.)")
    assert r.attempts == 1 and t.calls == 1


def test_deadline_covers_attempts_and_waits_together():
    busy = CallError("overloaded", status=503, retry_after=0.05)
    p, t = make_provider([busy, busy, "hang"], timeout=60.0, deadline=0.4, max_retries=10)
    r = asyncio.run(p.complete(req()))
    assert r.error == "deadline of 0.4s exceeded after 3 attempts" and r.attempts == 3 and t.calls == 3


def test_without_a_deadline_retries_run_to_max_retries_and_400s_are_not_retried():
    busy = CallError("boom", status=500, retry_after=0)
    p, t = make_provider([busy, busy, busy], max_retries=2)
    r = asyncio.run(p.complete(req()))
    assert (r.error, r.attempts, t.calls) == ("HTTP 500: boom", 3, 3)
    p, t = make_provider([CallError("bad request", status=400)], max_retries=5)
    r = asyncio.run(p.complete(req()))
    assert (r.error, r.attempts, t.calls) == ("HTTP 400: bad request", 1, 1)


def test_provider_backs_off_concurrency_on_429s_and_every_request_succeeds():
    throttle = CallError("slow down", status=429, retry_after=0)
    p, t = make_provider([throttle] * 40, concurrency=16, max_retries=50)

    async def go():
        return await asyncio.gather(*(p.complete(req(i)) for i in range(64)))

    responses = asyncio.run(go())
    assert all(r.ok for r in responses) and t.calls == 64 + 40
    assert p.adaptive.decreases >= 3 and p.adaptive.lowest <= 2
    assert t.peak_after_throttle < 16  # after the first 429, the wire never again held the full 16
    assert p.adaptive.in_flight == 0


def test_adaptive_concurrency_false_keeps_the_configured_concurrency():
    p, _ = make_provider([], concurrency=5, adaptive_concurrency=False)
    assert p.adaptive.enabled is False and p.adaptive.ceiling == 5


# ---- end to end through the CLI --------------------------------------------------------------------------


def _items(n: int) -> list[dict]:
    colours = ["red", "green", "blue", "grey"]
    return [{"id": f"q{i:03d}", "type": "mcq_single", "inputs": {"text": f"Question {i}: pick a colour."},
             "choices": colours, "answer": colours[i % 4]} for i in range(n)]


def test_heavy_429s_complete_with_every_row_ok(tmp_path):
    data = write_items(tmp_path / "d.jsonl", _items(120))
    r = run_cli([f"dataset={data}", f"output_root={tmp_path}", "progress=false", "cache.enabled=false",
                 "provider.sim.behaviours=[{name:faults,rates:{rate_limit:0.4,rate_limit_no_retry_after:0.2},"
                 "retry_after_s:0}]", "provider.max_retries=30", "provider.backoff_base=0.002",
                 "provider.backoff_max=0.01", "provider.concurrency=16"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    rows = read_rows(run_dir)
    assert len(rows) == 120 and {row["status"] for row in rows} == {"ok"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["counts"]["failed"] == 0 and summary["counts"]["attempts"] > 200
    conc = summary["run"]["concurrency"]
    assert conc["ceiling"] == 16 and conc["decreases"] >= 3 and conc["lowest"] <= 2


def test_failed_rows_are_recorded_counted_and_only_they_are_requested_again(tmp_path):
    """A sim outside the run counts every request it gets; its fault draws continue across runs."""
    from eval752.providers.sim import AnswerKey, start_in_thread
    from eval752.providers.sim.settings import SimSettings

    data = write_items(tmp_path / "d.jsonl", _items(40))
    settings = SimSettings(seed=3, accuracy={"mcq_single": 1.0, "default": 1.0},
                           behaviours=[{"name": "server_error", "rate": 0.25}])
    with start_in_thread(settings, AnswerKey.load(data)) as sim:
        args = [f"dataset={data}", f"output_root={tmp_path}", "progress=false", "cache.enabled=false",
                "provider=openai_compat", "provider.model=openai/sim-1", f"provider.api_base={sim.base_url}",
                "provider.max_retries=0"]
        r = run_cli(args, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        run_dir = Path(last_line(r.stdout))
        assert sim.server.requests == 40
        rows = read_rows(run_dir)
        failed = [row for row in rows if row["status"] == "error"]
        assert 3 <= len(failed) <= 25
        message = "HTTP 500: The server had an error while processing your request. Sorry about that!"
        assert {(row["response"]["error"], row["response"]["attempts"]) for row in failed} == {(message, 1)}
        assert all(row["verdict"] is None for row in failed)
        summary = json.loads((run_dir / "summary.json").read_text())
        ok = 40 - len(failed)
        assert summary["counts"]["failed"] == len(failed) and summary["failed"] == {
            "count": len(failed), "reasons": {message: len(failed)}}
        assert summary["metrics"]["score"]["value"] == round(ok / 40, 6) and summary["metrics"]["score"]["num"] == 40
        assert summary["metrics"]["score_answered"]["value"] == 1.0
        assert summary["metrics"]["score_answered"]["num"] == ok
        kept = {row["item_id"]: row for row in rows if row["status"] == "ok"}

        rounds = 0
        while summary["counts"]["failed"]:
            rounds += 1
            assert rounds <= 8
            before, to_retry = sim.server.requests, summary["counts"]["failed"]
            again = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path)
            assert again.returncode == 0, again.stderr
            assert f"resuming: {to_retry} failed or duplicate rows will be retried" in again.stderr
            summary = json.loads((run_dir / "summary.json").read_text())
            assert sim.server.requests - before == to_retry == summary["run"]["requests_sent"]
        rows = read_rows(run_dir)
        assert len(rows) == 40 and {row["status"] for row in rows} == {"ok"}
        assert all(kept[row["item_id"]] == row for row in rows if row["item_id"] in kept)
        assert summary["metrics"]["score"]["value"] == 1.0

        before = sim.server.requests
        done = run_cli([f"resume={run_dir}", "progress=false"], cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert sim.server.requests == before
        assert json.loads((run_dir / "summary.json").read_text())["run"]["requests_sent"] == 0


def test_a_context_length_400_fails_every_time_and_is_never_retried(tmp_path):
    data = write_items(tmp_path / "d.jsonl", _items(30))
    r = run_cli([f"dataset={data}", f"output_root={tmp_path}", "progress=false", "cache.enabled=false",
                 "provider.sim.behaviours=[{name:faults,rates:{context_length:0.3,server_error:0.2}}]",
                 "provider.backoff_base=0.001", "provider.backoff_max=0.01", "provider.max_retries=20"],
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = read_rows(Path(last_line(r.stdout)))
    failed = [row for row in rows if row["status"] == "error"]
    assert failed and all(row["response"]["error"].startswith("HTTP 400: This model's maximum context length")
                          for row in failed)
    assert {row["status"] for row in rows if row not in failed} == {"ok"}


# ---- the crash-safety soak ---------------------------------------------------------------------------------


def _soak_module():
    spec = importlib.util.spec_from_file_location("eval752_soak", ROOT / "benchmarks" / "soak.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_soak_2000_items_three_sigkills_every_fault(tmp_path):
    r = _soak_module().soak(tmp_path, items=2000, kills=3, seed=7, rate=0.015, timeout=50)
    assert r["kills"] == 3
    assert r["rows"] == r["unique_rows"] == 2000 and r["statuses"] == ["ok"]
    assert r["retried_rows"] > 50  # the faults did fire
    assert r["score"] == r["clean_score"] and r["by_type"] == r["clean_by_type"]
    last = r["last_resume"]
    assert last["requests_sent"] == 2000 - last["ok_before"]  # completed rows were never requested again
