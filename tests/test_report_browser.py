"""The run report in a real browser: headless Debian chromium (``/usr/bin/chromium``; .ci/run installs it).
The page loads without script errors, the item browser's filters (set through the URL fragment, as a shared
link would) show the right number of rows, hostile item text stays text, and a screenshot is taken."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_report import HOSTILE, make_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0"]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=90)


def body_attrs(dom: str) -> dict[str, str]:
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    verdicts = ["pass"] * 20 + ["fail"] * 6 + ["none"] * 3 + ["error"] * 1  # 10 not passed, 30 in all
    run = make_run(root, "browser", verdicts, hostile_at=21)
    from eval752.report.run_report import write_run_report

    return write_run_report(run)


@pytest.mark.parametrize("fragment, shown", [("", 30), ("#failed=1", 10), ("#section=s1", 15),
                                             ("#failed=1&section=s2", 5), ("#verdict=no%20answer", 3),
                                             ("#q=answer%202", 9)])
def test_item_browser_filters(tmp_path, report, fragment, shown):
    r = chromium(tmp_path, "--dump-dom", report.as_uri() + fragment)
    assert r.returncode == 0, r.stderr[-2000:]
    attrs = body_attrs(r.stdout)
    assert attrs.get("data-ready") == "1", "the page script did not finish"
    assert "data-errors" not in attrs and "Uncaught" not in r.stderr
    assert not re.search(r"CONSOLE.*error", r.stderr, re.I), r.stderr[-2000:]
    assert attrs["data-shown"] == str(shown)
    assert r.stdout.count('class="item-row"') == shown
    assert f"{shown} of 30 rows" in r.stdout


def test_hostile_item_text_stays_text(tmp_path, report):
    r = chromium(tmp_path, "--dump-dom", report.as_uri() + "#open=it021")
    attrs = body_attrs(r.stdout)
    assert attrs.get("data-ready") == "1" and "data-pwned" not in attrs and "data-errors" not in attrs
    detail = re.search(r'<div id="detail">(.*?)</div>', r.stdout, re.S).group(1)
    assert "item it021" in detail and "<img" not in detail and "&lt;img src=x" in detail
    assert HOSTILE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in detail


def test_screenshot(tmp_path, report):
    shot = tmp_path / "report.png"
    r = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", "--hide-scrollbars",
                 report.as_uri() + "#failed=1")
    assert r.returncode == 0, r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
