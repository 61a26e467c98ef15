"""Export a dataset or a run directory as a ``.eval752.zip`` bundle.

Layout of a bundle::

    manifest.json        format_version, kind (dataset | run), generator, created, sections with item
                         counts, counts, and {"sha256", "size"} of every other entry
    meta.json            name, description, version_hash (== the dataset's), schema_version
    sections/<s>.jsonl   the items, one canonical JSON object per line (at least one section)
    assets/...           every asset the items reference
    checkers/*.py        optional custom checker code (never run unless the user trusts it)
    run_config.json      run bundles: the run's composed config, secrets removed
    run_manifest.json    run bundles: the run's own manifest.json
    results.jsonl        run bundles: the run's result rows
    summary.json         run bundles: the run's summary

Export is deterministic: section files are written from the parsed items (key order and whitespace of the
source do not matter), JSON files with sorted keys, and ``created`` is fixed (``$SOURCE_DATE_EPOCH`` if
set, else 1980-01-01T00:00:00Z for datasets and the run's end time for runs), so the same dataset gives a
byte-identical zip.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..datasets import Dataset, load_any
from ..errors import ConfigError
from ..types import canonical_json
from .zipio import write_zip

FORMAT = "eval752.bundle"
FORMAT_VERSION = 1
SCHEMA_VERSION = 1
SUFFIX = ".eval752.zip"
SECRET_KEY = re.compile(r"^(.*[_-])?(api_?key|token|access_token|auth_token|secret|password|passwd|authorization|"
                        r"bearer|cookie)$", re.I)


def json_bytes(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def created_time(default: str = "1980-01-01T00:00:00Z") -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return default


def dataset_entries(dataset: Dataset, description: str = "") -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """``sections/*.jsonl``, ``assets/*`` and ``meta.json`` of a dataset, and the section list."""
    entries: dict[str, bytes] = {}
    by_section: dict[str, list[str]] = {}
    for item in dataset.items:
        by_section.setdefault(item.section, []).append(canonical_json(item.to_json()))
    sections = []
    for name in sorted(by_section):
        if not name or name.startswith(".") or re.search(r"[\\/\x00]", name):
            raise ConfigError(f"section name {name!r} cannot be a file name in a bundle")
        entries[f"sections/{name}.jsonl"] = "".join(line + "\n" for line in by_section[name]).encode("utf-8")
        sections.append({"name": name, "file": f"sections/{name}.jsonl", "items": len(by_section[name])})
    for rel in dataset.referenced_assets():
        entries[f"assets/{rel}"] = dataset.asset_path(rel).read_bytes()
    entries["meta.json"] = json_bytes({
        "name": dataset.name,
        "description": description,
        "version_hash": dataset.version_hash,
        "schema_version": SCHEMA_VERSION,
    })
    return entries, sections


def finish_bundle(entries: dict[str, bytes], kind: str, sections: list[dict[str, Any]], created: str,
                  extra_counts: dict[str, int] | None = None) -> dict[str, bytes]:
    counts = {"sections": len(sections), "items": sum(s["items"] for s in sections),
              "assets": sum(1 for n in entries if n.startswith("assets/")),
              "checkers": sum(1 for n in entries if n.startswith("checkers/")), **(extra_counts or {})}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "generator": f"eval752 {__version__}",
        "created": created,
        "sections": sections,
        "counts": counts,
        "entries": {name: {"sha256": sha256_bytes(data), "size": len(data)} for name, data in sorted(entries.items())},
    }
    return {**entries, "manifest.json": json_bytes(manifest)}


def add_checkers(entries: dict[str, bytes], checkers: list[Path]) -> None:
    for path in checkers:
        if not path.is_file() or path.suffix != ".py":
            raise ConfigError(f"--checker {path}: expected an existing .py file")
        entries[f"checkers/{path.name}"] = path.read_bytes()


def export_dataset(path: str | Path, out: Path, *, sections: list[str] | None = None, description: str = "",
                   checkers: list[Path] = (), fmt: str = "auto") -> dict[str, Any]:
    dataset, _ = load_any(path, format=fmt, sections=sections)
    entries, listed = dataset_entries(dataset, description)
    add_checkers(entries, list(checkers))
    write_zip(out, finish_bundle(entries, "dataset", listed, created_time()))
    return {"kind": "dataset", "items": len(dataset.items), "version_hash": dataset.version_hash}


def scrub(value: Any) -> Any:
    """Drop every key that looks like it holds a secret (``api_key_env`` names a variable and stays)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()
                if k == "api_key_env" or not (SECRET_KEY.match(str(k)) and v not in (None, "", {}))}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def run_config(run_dir: Path):
    """The run's saved config, validated (``RunConfig``), with eval752's resolvers registered."""
    from omegaconf import OmegaConf

    from ..cli import _register_resolvers
    from ..config import validate

    saved = run_dir / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise ConfigError(f"{run_dir}: no saved config at {saved} (is this an eval752 run directory?)")
    _register_resolvers()
    return validate(OmegaConf.load(saved))


def export_run(run_dir: Path, out: Path, *, description: str = "", checkers: list[Path] = ()) -> dict[str, Any]:
    from ..app import load_configured_dataset
    from ..config import to_container
    from ..rundir import MANIFEST, RESULTS, SUMMARY, read_json

    run_dir = Path(run_dir)
    for name in (RESULTS, SUMMARY, MANIFEST):
        if not (run_dir / name).is_file():
            raise ConfigError(f"{run_dir}: no {name}; export a finished run directory")
    cfg = run_config(run_dir)
    if cfg.dataset.format == "verifier":
        raise ConfigError(f"{run_dir}: verifier runs cannot be bundled yet")
    manifest = read_json(run_dir / MANIFEST)
    dataset = load_configured_dataset(cfg)
    expected = (manifest.get("dataset") or {}).get("version_hash")
    if expected and expected != dataset.version_hash:
        raise ConfigError(f"{run_dir}: the run used dataset version {expected[:12]}, but "
                          f"{cfg.dataset.path} is now version {dataset.version_hash[:12]}; cannot snapshot it")
    entries, listed = dataset_entries(dataset, description)
    add_checkers(entries, list(checkers))
    config = scrub(to_container(cfg))
    for key in ("resume", "reproduce"):
        config[key] = None
    entries["run_config.json"] = json_bytes(config)
    entries["run_manifest.json"] = json_bytes(manifest)
    entries[RESULTS] = (run_dir / RESULTS).read_bytes()
    entries[SUMMARY] = (run_dir / SUMMARY).read_bytes()  # verbatim: the report reads it in its own order
    rows = sum(1 for line in entries[RESULTS].splitlines() if line.strip())
    created = created_time(str(manifest.get("ended") or manifest.get("started") or "1980-01-01T00:00:00Z"))
    write_zip(out, finish_bundle(entries, "run", listed, created, {"results": rows}))
    return {"kind": "run", "items": len(dataset.items), "results": rows, "version_hash": dataset.version_hash}
