"""``manifest.json``: everything needed to know what a run was and to rebuild it."""
from __future__ import annotations

import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from . import __version__

PACKAGES = ("hydra-core", "omegaconf", "litellm", "numba", "numpy", "aiohttp", "tqdm", "jinja2")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"eval752": __version__}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_revision(where: Path | None = None) -> dict[str, Any] | None:
    """The git commit of the working directory's checkout, and whether it had uncommitted changes."""
    cwd = str(where or Path.cwd())
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=5)
        return {"commit": rev.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return None


def build(cfg, dataset, config_hash: str, started: str) -> dict[str, Any]:
    return {
        "format": "eval752.run/1",
        "run_name": cfg.run_name,
        "status": "running",
        "started": started,
        "ended": None,
        "versions": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "git": git_revision(),
        "command": " ".join(sys.argv),
        "config_hash": config_hash,
        "dataset": {
            "name": dataset.name,
            "version_hash": dataset.version_hash,
            "items": len(dataset.items),
            "sections": list(dataset.sections),
        },
        "provider": {"name": cfg.provider.name, "model": cfg.provider.model,
                     "api_key_env": cfg.provider.api_key_env},
        "samples": cfg.samples,
    }


def finish(summary: dict[str, Any], *, complete: bool, interrupted: bool) -> dict[str, Any]:
    c = summary["counts"]
    return {
        "status": "complete" if complete else ("interrupted" if interrupted else "incomplete"),
        "ended": datetime.now(timezone.utc).isoformat(),
        "counts": {"rows": c["rows"], "ok": c["ok"], "failed": c["failed"], "cached": c["cached"]},
    }
