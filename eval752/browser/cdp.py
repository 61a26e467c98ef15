"""A minimal headless-Chromium driver over the DevTools protocol (aiohttp websocket), for running the
browser script unattended (tests, local fake pages). No browser is ever downloaded: it uses the system's
``chromium`` (``$EVAL752_CHROMIUM`` or the first of chromium / chromium-browser / google-chrome on PATH).
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1")


def find_chromium() -> str | None:
    env = os.environ.get("EVAL752_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class CDPError(RuntimeError):
    pass


class Chromium:
    """``async with Chromium() as page: await page.goto(url); await page.evaluate("1 + 1")``."""

    def __init__(self, executable: str | None = None, download_dir: Path | None = None, timeout: float = 30.0):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise CDPError("no chromium found (set EVAL752_CHROMIUM)")
        self.download_dir = download_dir
        self.timeout = timeout
        self._ids = itertools.count(1)

    async def __aenter__(self) -> "Chromium":
        import aiohttp

        self._profile = tempfile.mkdtemp(prefix="eval752-chromium-")
        self._proc = subprocess.Popen([self.executable, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            port = await self._port()
            self._http = aiohttp.ClientSession()
            targets = []
            deadline = time.monotonic() + self.timeout
            while not targets and time.monotonic() < deadline:
                async with self._http.get(f"http://127.0.0.1:{port}/json/list") as r:
                    targets = [t for t in await r.json() if t.get("type") == "page"]
                if not targets:
                    await asyncio.sleep(0.1)
            if not targets:
                raise CDPError("chromium opened no page")
            self._ws = await self._http.ws_connect(targets[0]["webSocketDebuggerUrl"], max_msg_size=0)
            async with self._http.get(f"http://127.0.0.1:{port}/json/version") as r:
                browser_url = (await r.json())["webSocketDebuggerUrl"]
            if self.download_dir is not None:  # kept open: the setting lasts as long as this connection
                self._bws = await self._http.ws_connect(browser_url)
                await self._bws.send_str(json.dumps({"id": 1, "method": "Browser.setDownloadBehavior", "params": {
                    "behavior": "allow", "downloadPath": str(self.download_dir)}}))
                reply = json.loads((await asyncio.wait_for(self._bws.receive(), self.timeout)).data)
                if "error" in reply:
                    raise CDPError(f"Browser.setDownloadBehavior: {reply['error']}")
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def _port(self) -> int:
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if marker.is_file():
                lines = marker.read_text().splitlines()
                if lines and lines[0].strip().isdigit():
                    return int(lines[0])
            if self._proc.poll() is not None:
                raise CDPError(f"chromium exited with status {self._proc.returncode}")
            await asyncio.sleep(0.05)
        raise CDPError("chromium did not open its DevTools port")

    async def __aexit__(self, *exc) -> None:
        for closer in ("_ws", "_bws", "_http"):
            obj = getattr(self, closer, None)
            if obj is not None:
                await obj.close()
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(getattr(self, "_profile", ""), ignore_errors=True)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg_id = next(self._ids)
        await self._ws.send_str(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        while True:
            msg = await asyncio.wait_for(self._ws.receive(), self.timeout)
            if msg.type != 1:  # aiohttp.WSMsgType.TEXT
                raise CDPError(f"devtools connection closed ({msg.type})")
            data = json.loads(msg.data)
            if data.get("id") == msg_id:
                if "error" in data:
                    raise CDPError(f"{method}: {data['error']}")
                return data.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        """The expression's value (JSON-able), or None for undefined. An uncaught exception is returned as
        ``{"exception": text}`` rather than raised, so callers can inspect refusals."""
        result = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                      "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            return {"exception": (details.get("exception") or {}).get("description") or details.get("text")}
        return result.get("result", {}).get("value")

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if await self.evaluate("document.readyState === 'complete' && location.href") == url:
                return
            await asyncio.sleep(0.05)
        raise CDPError(f"page {url} did not load")

    async def wait_for(self, expression: str, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        raise CDPError(f"timed out waiting for {expression}")
