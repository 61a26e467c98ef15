"""Turn a browser capture into a completed eval752 run directory, scored by eval752's own checkers.

Checks, in order: the capture's format; the token of the pack it carries (so prompts, item list and
dataset identity are as this machine made them); the dataset given now against the pack's version hash;
responses only for items of the pack, each once. The run directory then looks like any other:
``results.jsonl`` (eval752's row schema; a missing or failed capture is an ``error`` row), ``summary.json``,
``manifest.json`` (with a ``browser`` block), and ``.hydra/config.yaml`` whose dataset selection is the
pack's, so ``eval752-score input=<run>/results.jsonl`` re-scores it like any run.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .pack import CAPTURE_FORMAT, FORMAT_VERSION, TokenError, verify_pack


def read_capture(path: Path) -> dict[str, Any]:
    try:
        capture = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the capture ({e})") from None
    if not isinstance(capture, dict) or capture.get("format") != CAPTURE_FORMAT:
        raise ConfigError(f"{path}: not an eval752 browser capture (format {CAPTURE_FORMAT!r} expected)")
    if capture.get("format_version") != FORMAT_VERSION:
        raise ConfigError(f"{path}: unknown capture format version {capture.get('format_version')!r}")
    if not isinstance(capture.get("responses"), list):
        raise ConfigError(f"{path}: the capture has no responses list")
    return capture


def _run_config(pack: dict[str, Any], dataset_path: Path, target: dict[str, Any], checker: str | None):
    from ..config import CacheConfig, CheckerConfig, DatasetConfig, ProviderConfig, RunConfig

    d = pack["dataset"]
    preset = re.sub(r"[^A-Za-z0-9_-]", "_", str(target.get("preset") or "custom"))
    origin = str(target.get("origin") or "unknown")
    return RunConfig(
        dataset=DatasetConfig(name=d["name"], path=str(dataset_path.resolve()), format=d.get("format") or "auto",
                              sections=d.get("sections"), limit=d.get("limit"), system_prompt=d.get("system_prompt")),
        provider=ProviderConfig(name=f"browser-{preset}", model=f"browser/{origin}", transport="auto",
                                concurrency=1, track_cost=False),
        checker=CheckerConfig(name=checker or "auto", force=checker),
        cache=CacheConfig(enabled=False), run_name=f"{d['name']}-browser-{preset}", progress=False,
    )


def import_capture(capture_path: Path, dataset_path: Path, run_dir: Path | None, *, output_root: str = "outputs",
                   checker: str | None = None) -> Path:
    from omegaconf import OmegaConf

    from .. import manifest as manifest_mod
    from ..app import CheckerChooser, config_hash, load_configured_dataset
    from ..metrics import summarise
    from ..prompts import build_messages
    from ..rundir import MANIFEST, RESULTS, SUMMARY, ResultsWriter, write_json_atomic
    from ..types import Response, response_to_json, verdict_to_json

    capture = read_capture(capture_path)
    pack = verify_pack(capture.get("pack"), "capture's pack")
    target = capture.get("target") if isinstance(capture.get("target"), dict) else {}
    cfg = _run_config(pack, Path(dataset_path), target, checker)
    dataset = load_configured_dataset(cfg)
    expected = pack["dataset"]["version_hash"]
    if dataset.version_hash != expected:
        raise TokenError(f"dataset version mismatch: the pack was made from version {expected[:12]}, but "
                         f"{dataset_path} is version {dataset.version_hash[:12]}")
    if [it.id for it in dataset.items] != [it["id"] for it in pack["items"]]:
        raise TokenError("the pack's items are not the dataset selection's items")
    by_id: dict[str, dict[str, Any]] = {}
    for n, r in enumerate(capture["responses"], 1):
        rid = r.get("id") if isinstance(r, dict) else None
        if rid not in {it["id"] for it in pack["items"]}:
            raise ConfigError(f"{capture_path}: response {n} is for {rid!r}, which is not an item of the pack")
        if rid in by_id:
            raise ConfigError(f"{capture_path}: item {rid!r} has more than one response")
        by_id[rid] = r
    chooser = CheckerChooser(cfg, dataset.items)
    if run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000_000 // 1000:06d}"
        run_dir = Path(output_root) / "runs" / f"{stamp}_{cfg.run_name}"
    run_dir = Path(run_dir)
    if run_dir.exists() and any(run_dir.iterdir()):
        raise ConfigError(f"{run_dir} already exists and is not empty")
    (run_dir / ".hydra").mkdir(parents=True, exist_ok=True)
    started = str(capture.get("started") or datetime.now(timezone.utc).isoformat())

    async def score() -> list[dict[str, Any]]:
        rows = []
        for item in dataset.items:
            r = by_id.get(item.id) or {"text": "", "error": "no response captured"}
            text = r.get("text") if isinstance(r.get("text"), str) else ""
            latency = r.get("latency_ms")
            error = r.get("error") or (None if text.strip() else "empty response")
            response = Response(text=text, finish_reason="stop" if error is None else None, error=error,
                                latency_s=round(latency / 1000, 6) if isinstance(latency, (int, float)) else None)
            name, check = chooser.for_item(item)
            verdict = verdict_to_json(await check.acheck(item, response)) if error is None else None
            rows.append({"item_id": item.id, "sample": 0, "section": item.section, "type": item.type,
                         "checker": name, "request": {"messages": list(build_messages(item, cfg.dataset, None)),
                                                      "params": {}},
                         "response": response_to_json(response), "verdict": verdict,
                         "status": "ok" if error is None else "error"})
        return rows

    rows = asyncio.run(score())
    writer = ResultsWriter(run_dir / RESULTS)
    try:
        for row in rows:
            writer.write(row)
    finally:
        writer.close()
    OmegaConf.save(OmegaConf.structured(cfg), run_dir / ".hydra" / "config.yaml")
    (run_dir / ".hydra" / "overrides.yaml").write_text("[]\n", encoding="utf-8")
    summary = summarise(rows, samples=1)
    summary["run"] = {"name": cfg.run_name, "dataset": dataset.name, "provider": cfg.provider.name,
                      "model": cfg.provider.model, "seconds": None, "requests_sent": len(by_id)}
    write_json_atomic(run_dir / SUMMARY, summary)
    manifest = manifest_mod.build(cfg, dataset, config_hash(cfg), started)
    manifest.update(manifest_mod.finish(summary, complete=True, interrupted=False))
    manifest["command"] = f"eval752-browser import {capture_path}"
    manifest["browser"] = {"preset": target.get("preset"), "origin": target.get("origin"),
                           "user_agent": target.get("user_agent"), "capture_started": capture.get("started"),
                           "capture_ended": capture.get("ended"), "pack_created": pack.get("created"),
                           "pack_token": pack.get("token")}
    write_json_atomic(run_dir / MANIFEST, manifest)
    return run_dir

