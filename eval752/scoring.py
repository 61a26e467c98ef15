"""Scoring recorded outputs: the second entrance to the same checkers, summaries and diagnostics.

``eval752-score`` reads responses that already exist and calls no model:

- ``eval752``: eval752's own ``results.jsonl``; every successful response is checked again with the
  configured checkers against the run's dataset (from the run's saved config unless ``dataset`` is given);
- ``verifier``: MiniMax-Provider-Verifier ``*_results.jsonl`` rows, re-validated with upstream semantics;
- ``jsonl``: any JSONL, for the diagnostics only.

Diagnostics (degenerate repetition, Cyrillic, language leaks; numba kernels) stream the input in chunks,
so memory does not grow with the file.
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from .config import DEFAULT_DIAG_TEXT_FIELDS, RunConfig, ScoreConfig, validate
from .errors import ConfigError, InputFormatError
from .metrics import summarise
from .rundir import RESULTS, SUMMARY, ResultsWriter, write_json_atomic
from .types import response_from_json, verdict_to_json


def detect_format(path: Path) -> str:
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise InputFormatError(f"{path}:{n}: -: not JSON ({e}); expected one JSON object per line") from None
            if not isinstance(row, dict):
                raise InputFormatError(f"{path}:{n}: -: expected a JSON object, got {type(row).__name__}")
            if {"item_id", "sample", "response", "status"} <= row.keys():
                return "eval752"
            if "data_index" in row and ("response" in row or "finish_reason" in row):
                return "verifier"
            return "jsonl"
    raise InputFormatError(f"{path}: the file has no rows")


def _run_config_for(cfg: ScoreConfig, input_path: Path) -> RunConfig:
    if cfg.dataset is not None:
        return RunConfig(dataset=cfg.dataset, checker=cfg.checker)
    saved = input_path.parent / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise ConfigError(
            f"{input_path} is not inside an eval752 run directory (no {saved}); "
            "name its dataset with dataset.path=<file or folder>"
        )
    from omegaconf import OmegaConf

    run_cfg = validate(OmegaConf.load(saved))
    run_cfg.checker = cfg.checker
    return run_cfg


def rescore_eval752(cfg: ScoreConfig, input_path: Path, out_dir: Path) -> dict[str, Any]:
    from .app import CheckerChooser, load_configured_dataset

    run_cfg = _run_config_for(cfg, input_path)
    dataset = load_configured_dataset(run_cfg)
    items = {it.id: it for it in dataset.items}
    chooser = CheckerChooser(run_cfg, dataset.items)
    writer = ResultsWriter(out_dir / RESULTS)
    rows_out: list[dict[str, Any]] = []
    samples = 1

    async def go() -> None:
        nonlocal samples
        with open(input_path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputFormatError(f"{input_path}:{n}: -: not JSON ({e.msg})") from None
                item = items.get(row.get("item_id"))
                if item is None:
                    raise InputFormatError(
                        f"{input_path}:{n}: item_id: {row.get('item_id')!r} is not in dataset {dataset.name!r}"
                    )
                samples = max(samples, int(row.get("sample", 0)) + 1)
                if row.get("status") == "ok":
                    name, checker = chooser.for_item(item)
                    verdict = await checker.acheck(item, response_from_json(row.get("response") or {}))
                    row = {**row, "checker": name, "verdict": verdict_to_json(verdict)}
                writer.write(row)
                rows_out.append(row)

    try:
        asyncio.run(go())
    finally:
        writer.close()
    return summarise(rows_out, samples=samples)


def rescore_verifier(cfg: ScoreConfig, input_path: Path, out_dir: Path) -> dict[str, Any]:
    from .verifier import loop_summary, rescore_results, summary_metrics

    rows, summary = rescore_results(input_path, cfg.prompts, n=cfg.verifier.n, threshold=cfg.verifier.threshold)
    writer = ResultsWriter(out_dir / RESULTS)
    try:
        for row in rows:
            writer.write(row)
    finally:
        writer.close()
    return {"loop_summary": summary, "metrics": summary_metrics(summary)}


def score_from_config(cfg: ScoreConfig, out_dir: Path) -> dict[str, Any]:
    input_path = Path(cfg.input).expanduser()
    if not input_path.is_file():
        raise ConfigError(f"input={cfg.input}: no such file")
    fmt = detect_format(input_path) if cfg.format == "auto" else cfg.format
    out_dir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"input": str(input_path), "format": fmt}
    if fmt == "eval752":
        summary.update(rescore_eval752(cfg, input_path, out_dir))
    elif fmt == "verifier":
        summary.update(rescore_verifier(cfg, input_path, out_dir))
    if cfg.diagnostics.enabled:
        summary["diagnostics"] = run_diagnostics(cfg, input_path, out_dir, fmt)
    write_json_atomic(out_dir / SUMMARY, summary)
    print_score_summary(summary)
    print(out_dir)
    return summary


def run_diagnostics(cfg: ScoreConfig, input_path: Path, out_dir: Path, fmt: str) -> dict[str, Any]:
    from .diagnostics import scan_results_file

    d = cfg.diagnostics
    text_fields, id_field, prompt_field = list(d.text_fields), d.id_field, d.prompt_field
    if fmt == "verifier" and text_fields == list(DEFAULT_DIAG_TEXT_FIELDS):
        text_fields = ["response.choices.0.message.content", "response.choices.0.message.reasoning_content"]
        id_field = "data_index"
    return scan_results_file(
        input_path, out_dir / "diagnostics.jsonl", text_fields=text_fields, group_field=d.group_field,
        id_field=id_field, prompt_field=prompt_field, n=d.n, threshold=d.threshold, expected=d.expected,
        summary_path=out_dir / "diagnostics.json",
    )


def print_score_summary(summary: dict[str, Any]) -> None:
    lines = [f"scored {summary['input']} (format {summary['format']})"]
    for name, m in (summary.get("metrics") or {}).items():
        if isinstance(m, dict) and "value" in m:
            v = "-" if m["value"] is None else f"{m['value']:.4f}"
            lines.append(f"  {name:<34}{v:>10}  num {m.get('num')}")
    diag = summary.get("diagnostics")
    if diag:
        o = diag.get("overall", {})
        lines.append(f"  diagnostics: {diag.get('rows')} rows; " + ", ".join(
            f"{k} {v}" for k, v in o.items() if k.endswith("rate")))
    print("\n".join(lines), file=sys.stdout)
