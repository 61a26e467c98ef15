"""The simulated vendor's HTTP server: OpenAI-compatible Chat Completions on 127.0.0.1.

Endpoints: ``POST /v1/chat/completions`` (and ``/chat/completions``), ``GET /v1/models``,
``GET /health``. Run it in-process (``await SimServer(settings).start()``), on its own thread
(``start_in_thread``), or as the console script ``eval752-sim``.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import secrets
import signal
import sys
import threading
import time
from typing import Any

from aiohttp import web

from ...errors import Eval752Error
from .answer_key import AnswerKey
from .behaviours import build_pipeline, truncate_to_budget
from .context import RequestContext, message_text
from .settings import DEFAULT_ACCURACY, PROFILES, LatencySpec, SimSettings, profile
from .wire import abort_connection, completion_body, error_response, json_response, sse_events, write_sse, _dumps

log = logging.getLogger(__name__)
ITEM_HEADER = "X-Eval752-Item"


def last_user_text(messages: list[Any]) -> str:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            return message_text(m.get("content"))
    return ""


class SimServer:
    """An OpenAI-compatible server whose answers come from ``settings`` and ``answer_key``."""

    def __init__(self, settings: SimSettings | None = None, answer_key: AnswerKey | None = None) -> None:
        self.settings = settings or SimSettings()
        self.answer_key = answer_key
        self.pipeline = build_pipeline(self.settings)
        self.attempts: dict[str, int] = {}
        self.requests = 0
        self._ids = itertools.count(1)
        self._id_prefix = secrets.token_hex(4)
        self._runner: web.AppRunner | None = None
        self.base_url: str | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/models", self.models)
        app.router.add_get("/health", self.health)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (0: a free port) and return the base URL, ``http://host:port/v1``."""
        runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, host, port, backlog=1024)
        await site.start()
        self._runner = runner
        bound = runner.addresses[0]
        self.base_url = f"http://{host}:{bound[1]}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    # -- handlers --------------------------------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        return json_response({"status": "ok", "model": self.settings.model, "requests": self.requests})

    async def models(self, request: web.Request) -> web.Response:
        return json_response({"object": "list", "data": [
            {"id": self.settings.model, "object": "model", "created": 0, "owned_by": "eval752-sim"}]})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return error_response(400, "We could not parse the JSON body of your request.", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return error_response(400, "'messages' must be a non-empty array.", "invalid_request_error",
                                  param="messages")
        prompt = last_user_text(body["messages"])
        item_header = request.headers.get(ITEM_HEADER)
        entry = self.answer_key.lookup(item_header, prompt) if self.answer_key is not None else None
        ctx = RequestContext(self.settings, body, raw, item_header, entry, prompt, request, self.attempts)
        early = await self.pipeline.run_before(ctx)
        if early is not None:
            return early
        drafts = [truncate_to_budget(ctx, self.pipeline.draft(ctx, i)) for i in range(ctx.n)]
        cid = f"chatcmpl-{self._id_prefix}{next(self._ids):08x}"
        created = int(time.time())
        if ctx.stream:
            return await write_sse(request, sse_events(ctx, drafts, cid, created), cut=ctx.cut_stream)
        payload = _dumps(completion_body(ctx, drafts, cid, created)).encode("utf-8")
        if ctx.cut_stream:
            resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            resp.content_length = len(payload)
            await resp.prepare(request)
            await resp.write(payload[: len(payload) // 2])
            abort_connection(request)
            return resp
        return web.Response(body=payload, content_type="application/json")


# -- on a thread -----------------------------------------------------------------------------------
class SimHandle:
    """A server running on its own event loop in a daemon thread. ``stop()`` (or leaving a ``with``
    block) shuts it down."""

    def __init__(self, server: SimServer, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
        self.server = server
        self.loop = loop
        self.thread = thread
        self.base_url: str = server.base_url or ""

    def stop(self, timeout: float = 10.0) -> None:
        if not self.thread.is_alive():
            return
        fut = asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop)
        try:
            fut.result(timeout)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout)

    def __enter__(self) -> "SimHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start_in_thread(settings: SimSettings | None = None, answer_key: AnswerKey | None = None,
                    host: str = "127.0.0.1", port: int = 0) -> SimHandle:
    server = SimServer(settings, answer_key)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start(host, port))
        except BaseException as e:  # reported to the caller below
            failure.append(e)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="eval752-sim", daemon=True)
    thread.start()
    ready.wait(30)
    if failure:
        raise failure[0]
    return SimHandle(server, loop, thread)


# -- command line ----------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eval752-sim", description="Serve the simulated vendor (OpenAI-compatible).")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 (default): a free port")
    p.add_argument("--profile", default="default", help=f"one of: {', '.join(sorted(PROFILES))}")
    p.add_argument("--seed", type=int)
    p.add_argument("--model")
    p.add_argument("--accuracy", action="append", default=[], metavar="TYPE=P",
                   help=f"per item type ({', '.join(DEFAULT_ACCURACY)}); a bare P sets all; repeatable")
    p.add_argument("--temperature-penalty", type=float)
    p.add_argument("--latency-ms", type=float, help="mean latency")
    p.add_argument("--latency-kind", choices=("fixed", "uniform", "lognormal"))
    p.add_argument("--latency-spread-ms", type=float)
    p.add_argument("--reasoning", action="store_true", help="add reasoning_content to replies")
    p.add_argument("--behaviour", action="append", default=[], metavar="NAME|JSON",
                   help='a behaviour by name or as JSON, e.g. \'{"name": "rate_limit", "rate": 0.1}\'')
    p.add_argument("--fault", action="append", default=[], metavar="KIND=RATE", help="add a fault to the mix")
    p.add_argument("--answer-key", metavar="FILE.jsonl", help="an answer key or a native dataset .jsonl")
    return p


def settings_from_args(args: argparse.Namespace) -> SimSettings:
    s = profile(args.profile)
    if args.seed is not None:
        s.seed = args.seed
    if args.model:
        s.model = args.model
    for spec in args.accuracy:
        kind, _, value = spec.rpartition("=")
        if kind in ("", "all"):
            s.accuracy = {k: float(value) for k in s.accuracy}
        else:
            s.accuracy[kind] = float(value)
    if args.temperature_penalty is not None:
        s.temperature_penalty = args.temperature_penalty
    lat = s.latency
    s.latency = LatencySpec(args.latency_kind or lat.kind,
                            lat.mean_ms if args.latency_ms is None else args.latency_ms,
                            lat.spread_ms if args.latency_spread_ms is None else args.latency_spread_ms)
    if args.reasoning:
        s.reasoning = True
    s.behaviours = list(s.behaviours)
    for b in args.behaviour:
        s.behaviours.append(json.loads(b) if b.lstrip().startswith("{") else b)
    if args.fault:
        rates = {k: float(v) for k, _, v in (f.partition("=") for f in args.fault)}
        s.behaviours.append({"name": "faults", "rates": rates})
    return s


async def _serve(settings: SimSettings, key: AnswerKey | None, host: str, port: int) -> None:
    server = SimServer(settings, key)
    url = await server.start(host, port)
    print(url, flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, done.set)
    try:
        await done.wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
        key = AnswerKey.load(args.answer_key) if args.answer_key else None
        server_check = SimServer(settings, key)  # validates behaviours before printing anything
        del server_check
    except (ValueError, OSError, Eval752Error) as e:
        print(f"eval752-sim: {e}", file=sys.stderr)
        return 2
    asyncio.run(_serve(settings, key, args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
