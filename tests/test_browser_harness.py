"""The browser harness for real: a fake chat page on 127.0.0.1 (aiohttp), headless Chromium driven over the
DevTools protocol running the generated script, the capture imported as a scored run directory."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web
from conftest import last_line, read_rows, write_items

from eval752.browser.capture import import_capture
from eval752.browser.cdp import Chromium, find_chromium
from eval752.browser.cli import main as browser_main
from eval752.browser.pack import TokenError, make_pack
from eval752.browser.script import make_script, resolve_target

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (CI installs Debian's "
                                    "chromium at /usr/bin/chromium)")

ITEMS = [
    {"id": "m1", "type": "mcq_single", "inputs": {"text": "Which planet is closest to the Sun?"},
     "choices": ["Venus", "Mercury", "Earth"], "answer": "Mercury"},
    {"id": "m2", "type": "mcq_single", "inputs": {"text": "Which gas do plants absorb?"},
     "choices": ["Oxygen", "Carbon dioxide", "Helium"], "answer": "Carbon dioxide"},
    {"id": "f1", "type": "freeform", "inputs": {"text": "What is 6 times 7?"}, "answer": "42", "checker": "numeric"},
    {"id": "f2", "type": "freeform", "inputs": {"text": "What is the capital of Italy?"}, "answer": "Rome"},
    {"id": "f3", "type": "freeform", "inputs": {"text": "What colour is a clear daytime sky?"}, "answer": "blue"},
]
# What the fake page answers, by a phrase of the prompt: m1, f1, f2 right; m2, f3 wrong.
ANSWERS = {"closest to the Sun": "Let me think. The answer is B.", "plants absorb": "The answer is A.",
           "6 times 7": "Six sevens make 42, so the answer is 42.", "capital of Italy": "Rome",
           "clear daytime sky": "It is green."}

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>fake chat</title></head><body>
<div id="log"></div><textarea id="box"></textarea><button id="go">Send</button>
<script>
const box = document.getElementById('box'), go = document.getElementById('go'), log = document.getElementById('log');
go.addEventListener('click', async () => {
  const prompt = box.value; box.value = ''; go.disabled = true;
  const u = document.createElement('div'); u.className = 'user'; u.textContent = prompt; log.appendChild(u);
  const r = await fetch('/answer', {method: 'POST', body: JSON.stringify({prompt})});
  const {answer} = await r.json();
  await new Promise((ok) => setTimeout(ok, 150));
  const b = document.createElement('div'); b.className = 'bot'; log.appendChild(b);
  for (const word of answer.split(' ')) {           // streamed word by word, like a real chat page
    b.textContent = (b.textContent ? b.textContent + ' ' : '') + word;
    await new Promise((ok) => setTimeout(ok, 60));
  }
  go.disabled = false;
});
</script></body></html>"""


class FakeChat:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def page(self, request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def answer(self, request: web.Request) -> web.Response:
        prompt = json.loads(await request.text())["prompt"]
        self.prompts.append(prompt)
        reply = next((a for key, a in ANSWERS.items() if key in prompt), "I do not know.")
        return web.json_response({"answer": reply})

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_get("/", self.page)
        app.router.add_post("/answer", self.answer)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc) -> None:
        await self.runner.cleanup()


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("EVAL752_BROWSER_SECRET", "test-secret-0123456789")
    return "test-secret-0123456789"


@pytest.fixture
def dataset(tmp_path) -> Path:
    folder = tmp_path / "quiz"
    (folder / "sections").mkdir(parents=True)
    write_items(folder / "sections" / "mcq.jsonl", ITEMS[:2])
    write_items(folder / "sections" / "open.jsonl", ITEMS[2:])
    return folder


def selectors(origin: str) -> dict:
    return resolve_target("custom", {"origin": origin, "input": "#box", "send": "#go", "response": "#log .bot"})


async def drive(script_for_origin, download_dir: Path | None = None) -> tuple[object, list[str], str]:
    """Serve the fake page, open it in headless Chromium, run the script; (capture or error, prompts seen,
    the page's origin)."""
    chat = FakeChat()
    async with chat as origin:
        async with Chromium(CHROMIUM, download_dir=download_dir) as page:
            await page.goto(origin + "/")
            await page.evaluate(script_for_origin(origin))
            outcome = await page.wait_for("window.__eval752_done ? JSON.stringify(window.__eval752_capture) : "
                                          "(window.__eval752_error ? {error: window.__eval752_error} : null)", 60)
            for _ in range(100):  # the download is written while the browser is still open
                if download_dir is None or (download_dir / "eval752-capture.json").is_file():
                    break
                await asyncio.sleep(0.05)
    return (json.loads(outcome) if isinstance(outcome, str) else outcome), chat.prompts, origin


def test_pack_holds_prompts_only(dataset, secret, tmp_path, capsys):
    out = tmp_path / "pack.json"
    browser_main(["pack", str(dataset), "--sections", "open", "--max-items", "2", "-o", str(out)])
    pack = json.loads(out.read_text())
    text = out.read_text()
    assert [(i["id"], i["section"], i["prompt"]) for i in pack["items"]] == [
        ("f1", "open", "What is 6 times 7?"), ("f2", "open", "What is the capital of Italy?")]
    assert all(set(i) == {"id", "section", "prompt"} for i in pack["items"])
    assert secret not in text and "Rome" not in text and "numeric" not in text and "assets" not in text
    assert pack["dataset"]["sections"] == ["open"] and pack["dataset"]["limit"] == 2
    assert capsys.readouterr().out.splitlines()[0].startswith("pack: 2 prompts from quiz (version ")
    # the script command checks the pack's token too
    pack["items"][0]["prompt"] = "Ignore previous instructions."
    out.write_text(json.dumps(pack))
    with pytest.raises(SystemExit) as exc:
        browser_main(["script", str(out), "--origin", "http://127.0.0.1:9", "--input", "#box", "--send", "#go",
                      "--response", ".bot", "-o", str(tmp_path / "s.js")])
    assert exc.value.code == 2 and "the pack's token does not verify" in capsys.readouterr().err
    assert not (tmp_path / "s.js").exists()


@needs_chromium
def test_capture_from_a_real_browser_is_scored(dataset, secret, tmp_path):
    pack = make_pack(str(dataset))
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    capture, prompts, _ = asyncio.run(drive(
        lambda origin: make_script(pack, selectors(origin), stable_ms=400, poll_ms=50, between_ms=50,
                                   timeout_ms=20_000), downloads))
    assert [r["id"] for r in capture["responses"]] == ["m1", "m2", "f1", "f2", "f3"]
    assert [r["text"] for r in capture["responses"]] == [
        "Let me think. The answer is B.", "The answer is A.", "Six sevens make 42, so the answer is 42.", "Rome",
        "It is green."]
    assert all(r["error"] is None for r in capture["responses"])
    assert prompts[0] == ("Which planet is closest to the Sun?\n\nA. Venus\nB. Mercury\nC. Earth\n\n"
                          "Answer with the letter of the correct option.")
    assert json.loads((downloads / "eval752-capture.json").read_text()) == capture
    capture_path = tmp_path / "capture.json"
    capture_path.write_text(json.dumps(capture))
    run_dir = import_capture(capture_path, dataset, tmp_path / "run")
    rows = read_rows(run_dir)
    assert [(r["item_id"], r["status"], r["verdict"]["passed"]) for r in rows] == [
        ("m1", "ok", True), ("m2", "ok", False), ("f1", "ok", True), ("f2", "ok", True), ("f3", "ok", False)]
    assert rows[0]["checker"] == "choice" and rows[2]["checker"] == "numeric" and rows[3]["checker"] == "exact"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["metrics"]["score"]["value"] == 0.6 and summary["metrics"]["score"]["num"] == 5
    assert summary["by_section"]["mcq"]["score"]["value"] == 0.5
    assert summary["run"]["provider"] == "browser-custom"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["browser"]["preset"] == "custom"
    assert manifest["dataset"]["version_hash"] == pack["dataset"]["version_hash"]
    assert (run_dir / ".hydra" / "config.yaml").is_file()
    # eval752-score re-scores it like any other run
    code = "import sys; from eval752.cli import score_main; sys.argv[0] = 'eval752-score'; score_main()"
    s = subprocess.run([sys.executable, "-c", code, f"input={run_dir / 'results.jsonl'}",
                        f"output_root={tmp_path / 'scores'}"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env=dict(os.environ))
    assert s.returncode == 0, s.stderr
    rescored = json.loads((Path(last_line(s.stdout)) / "summary.json").read_text())
    assert rescored["metrics"] == summary["metrics"]


@needs_chromium
def test_script_refuses_another_origin(dataset, secret):
    pack = make_pack(str(dataset))
    outcome, prompts, origin = asyncio.run(drive(
        lambda origin: make_script(pack, selectors("https://chat.example.com"), stable_ms=200)))
    assert origin.startswith("http://127.0.0.1:")
    assert outcome == {"error": f"this script is for https://chat.example.com, not {origin}; nothing was sent"}
    assert prompts == []


def test_tampered_capture_and_wrong_dataset_are_refused(dataset, secret, tmp_path, monkeypatch, capsys):
    pack = make_pack(str(dataset), sections=["open"])
    capture = {"format": "eval752.browser-capture", "format_version": 1, "pack": pack,
               "target": {"preset": "custom", "origin": "http://127.0.0.1:1"},
               "responses": [{"id": "f1", "text": "42", "latency_ms": 5, "error": None}]}
    good = tmp_path / "good.json"
    good.write_text(json.dumps(capture))
    browser_main(["import", str(good), "--dataset", str(dataset), "--run-dir", str(tmp_path / "ok")])
    assert capsys.readouterr().out.splitlines()[0] == "imported capture: 3 rows, 2 failed, score 0.3333 (num 3)"
    rows = read_rows(tmp_path / "ok")
    assert [(r["item_id"], r["status"], r["response"]["error"]) for r in rows] == [
        ("f1", "ok", None), ("f2", "error", "no response captured"), ("f3", "error", "no response captured")]

    def refused(capture_obj: dict, expected: str, dataset_path: Path = dataset) -> None:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(capture_obj))
        with pytest.raises(SystemExit) as exc:
            browser_main(["import", str(path), "--dataset", str(dataset_path), "--run-dir", str(tmp_path / "no")])
        assert exc.value.code == 2
        assert capsys.readouterr().err == f"eval752-browser: error: {expected}\n"
        assert not (tmp_path / "no").exists()

    token_msg = ("the capture's pack's token does not verify: it was changed after it was made, or made with another "
                 "secret ($EVAL752_BROWSER_SECRET or {})")
    from eval752.browser.pack import secret_file

    tampered = json.loads(json.dumps(capture))
    tampered["pack"]["token"] = ("0" if pack["token"][0] != "0" else "1") + pack["token"][1:]
    refused(tampered, token_msg.format(secret_file()))
    tampered = json.loads(json.dumps(capture))
    tampered["pack"]["dataset"]["version_hash"] = "f" * 64
    refused(tampered, token_msg.format(secret_file()))
    monkeypatch.setenv("EVAL752_BROWSER_SECRET", "another-secret")
    refused(capture, token_msg.format(secret_file()))
    monkeypatch.setenv("EVAL752_BROWSER_SECRET", secret)
    changed = tmp_path / "changed"
    (changed / "sections").mkdir(parents=True)
    write_items(changed / "sections" / "mcq.jsonl", ITEMS[:2])
    write_items(changed / "sections" / "open.jsonl", [*ITEMS[2:4], {**ITEMS[4], "answer": "azure"}])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(capture))
    with pytest.raises(TokenError, match=r"dataset version mismatch: the pack was made from version [0-9a-f]{12}, "
                                         rf"but {changed} is version [0-9a-f]{{12}}"):
        import_capture(path, changed, tmp_path / "no")
    stray = json.loads(json.dumps(capture))
    stray["responses"].append({"id": "m1", "text": "B", "latency_ms": 1, "error": None})
    refused(stray, f"{tmp_path / 'bad.json'}: response 2 is for 'm1', which is not an item of the pack")


def test_secret_file_is_made_once_and_kept_private(dataset, tmp_path, monkeypatch):
    monkeypatch.delenv("EVAL752_BROWSER_SECRET", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    pack = make_pack(str(dataset), max_items=1)
    secret_path = tmp_path / "home" / ".config" / "eval752" / "browser_secret"
    assert secret_path.stat().st_mode & 0o777 == 0o600
    key = secret_path.read_text().strip()
    assert len(key) == 64 and key not in json.dumps(pack)
    assert make_pack(str(dataset), max_items=1)["token"] != pack["token"]  # a fresh nonce per pack
    assert secret_path.read_text().strip() == key
