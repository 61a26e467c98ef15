from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / "shared" / "realdata"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own response cache folder, so no test is answered from another's cache."""
    monkeypatch.setenv("EVAL752_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def realdata(*parts: str) -> Path:
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    return path


def run_cli(args: list[str], cwd: Path, *, env: dict | None = None, timeout: float = 120,
            module: str = "eval752.cli") -> subprocess.CompletedProcess:
    """Run an eval752 console command in a subprocess, as a user would."""
    full_env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    full_env.pop("HYDRA_FULL_ERROR", None)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


def read_rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


def write_items(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    return path
