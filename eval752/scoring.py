"""Scoring recorded outputs: the second entrance to the same checkers, summaries and diagnostics.

``eval752-score`` reads responses that already exist and calls no model (formats and their detection:
``eval752/importers/``):

- ``eval752``: eval752's own ``results.jsonl``; every successful response is checked again with the
  configured checkers against the run's dataset (from the run's saved config unless ``dataset`` is given);
- ``verifier``: MiniMax-Provider-Verifier ``*_results.jsonl`` rows, re-validated with upstream semantics;
- ``chat``, ``conversation``, ``eval_only``, ``csv``: foreign rows imported as ``Item`` + ``Response`` and
  scored by the same ``CheckerChooser``; rows that carry a model (eval-only) also roll up per model;
- ``alpaca_annotations``: AlpacaEval judgments, win rate per model (``eval752.arena``);
  ``alpaca_outputs``: AlpacaEval model outputs, diagnostics only;
- ``jsonl``: any JSONL, for the diagnostics only.

Diagnostics (degenerate repetition, Cyrillic, language leaks; numba kernels) stream the input in chunks,
so memory does not grow with the file; for imported formats they scan the rows written to
``results.jsonl`` (response text and reasoning, grouped by model when the rows have one).
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from .config import DEFAULT_DIAG_TEXT_FIELDS, CheckerConfig, RunConfig, ScoreConfig, validate
from .errors import ConfigError, InputFormatError
from .metrics import summarise
from .rundir import RESULTS, SUMMARY, ResultsWriter, write_json_atomic
from .types import response_from_json, verdict_to_json

IMPORTED_FORMATS = ("chat", "conversation", "eval_only", "csv", "alpaca_annotations", "alpaca_outputs")


# Fields only MiniMax-Provider-Verifier result rows carry (its validators'); K2VV rows have none of them.
_MINIMAX_ROW_FIELDS = {"tool_calls_finish_reason", "error_only_reasoning_checked", "language_following_checked",
                       "error_repeating_checked", "scenario_check_checked"}


def detect_format(path: Path) -> str:
    from .importers import detect_format as detect

    fmt = detect(path)
    if fmt == "verifier":  # K2-Vendor-Verifier results: K2VV's own row fields and no MiniMax validator field
        from .importers.common import jsonl_rows

        for _, row in jsonl_rows(path, "recorded outputs"):
            if ({"tool_calls_valid", "hash", "last_run_at"} & row.keys()) and not _MINIMAX_ROW_FIELDS & row.keys():
                return "k2"
            break
    return fmt


def _run_config_for(cfg: ScoreConfig, input_path: Path) -> RunConfig:
    if cfg.dataset is not None:
        return RunConfig(dataset=cfg.dataset, checker=cfg.checker, judge=cfg.judge)
    saved = input_path.parent / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise ConfigError(
            f"{input_path} is not inside an eval752 run directory (no {saved}); "
            "name its dataset with dataset.path=<file or folder>"
        )
    from omegaconf import OmegaConf

    run_cfg = validate(OmegaConf.load(saved))
    # The run's own checkers and judge, unless this command names others.
    if cfg.checker != CheckerConfig():
        run_cfg.checker = cfg.checker
    if cfg.judge.provider.model:
        run_cfg.judge = cfg.judge
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


def rescore_k2(cfg: ScoreConfig, input_path: Path, out_dir: Path) -> dict[str, Any]:
    """K2-Vendor-Verifier ``results.jsonl``: tool calls validated again (K2VV semantics), K2VV's summary, and
    with ``verifier.baseline`` (official results or summary) the side-by-side comparison and verdicts."""
    from .verifier.k2 import compare_k2, k2_aggregate, load_k2_baseline, rescore_k2_results
    from .verifier.live import parse_thresholds

    rows, summary, notes = rescore_k2_results(input_path, cfg.prompts)
    for note in notes:
        print(f"eval752-score: {note}", file=sys.stderr)
    writer = ResultsWriter(out_dir / RESULTS)
    try:
        for row in rows:
            writer.write(row)
    finally:
        writer.close()
    out: dict[str, Any] = {"k2_summary": summary}
    comparison = None
    if cfg.verifier.baseline:
        comparison = compare_k2(load_k2_baseline(cfg.verifier.baseline)[0], rows, summary)
        out["comparison"] = comparison
    agg = k2_aggregate([summary], [comparison["trigger_similarity"] if comparison else None],
                       parse_thresholds(cfg.verifier.thresholds))
    out["metrics"] = {k: {"value": m["value"], "num": m["num"], **({"verdict": m["verdict"]} if "verdict" in m else {})}
                      for k, m in agg["metrics"].items()}
    out["verdict"] = agg["verdict"]
    return out


def score_from_config(cfg: ScoreConfig, out_dir: Path) -> dict[str, Any]:
    input_path = Path(cfg.input).expanduser()
    if not input_path.is_file():
        raise ConfigError(f"input={cfg.input}: no such file")
    fmt = detect_format(input_path) if cfg.format == "auto" else cfg.format
    out_dir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"input": str(input_path), "format": fmt}
    scanned = input_path
    if fmt == "eval752":
        summary.update(rescore_eval752(cfg, input_path, out_dir))
    elif fmt == "verifier":
        summary.update(rescore_verifier(cfg, input_path, out_dir))
    elif fmt == "k2":
        summary.update(rescore_k2(cfg, input_path, out_dir))
    elif fmt in IMPORTED_FORMATS:
        from .importers.score import score_imported

        summary.update(score_imported(cfg, input_path, out_dir, fmt))
        scanned = out_dir / RESULTS
    if cfg.diagnostics.enabled:
        summary["diagnostics"] = run_diagnostics(cfg, scanned, out_dir, fmt)
    write_json_atomic(out_dir / SUMMARY, summary)
    print_score_summary(summary)
    print(out_dir)
    if fmt == "k2" and cfg.verifier.fail_on_verdict and summary.get("verdict") == "fail":
        from .verifier.live import VerdictFailed

        failed = [k for k, m in summary["metrics"].items() if m.get("verdict") == "fail"]
        raise VerdictFailed(f"verdict FAIL ({', '.join(failed)}); verifier.fail_on_verdict=true")
    return summary


def run_diagnostics(cfg: ScoreConfig, input_path: Path, out_dir: Path, fmt: str) -> dict[str, Any]:
    from .diagnostics import scan_results_file

    d = cfg.diagnostics
    text_fields, id_field, prompt_field = list(d.text_fields), d.id_field, d.prompt_field
    if fmt in ("verifier", "k2") and text_fields == list(DEFAULT_DIAG_TEXT_FIELDS):
        text_fields = ["response.choices.0.message.content", "response.choices.0.message.reasoning_content"]
        id_field = "data_index"
    group_field = d.group_field
    if group_field is None and fmt in ("eval_only", "alpaca_annotations", "alpaca_outputs"):
        group_field = "model"
    return scan_results_file(
        input_path, out_dir / "diagnostics.jsonl", text_fields=text_fields, group_field=group_field,
        id_field=id_field, prompt_field=prompt_field, n=d.n, threshold=d.threshold, expected=d.expected,
        summary_path=out_dir / "diagnostics.json",
    )


def print_score_summary(summary: dict[str, Any]) -> None:
    lines = [f"scored {summary['input']} (format {summary['format']})"]
    for name, m in (summary.get("metrics") or {}).items():
        if isinstance(m, dict) and "value" in m:
            v = "-" if m["value"] is None else f"{m['value']:.4f}"
            lines.append(f"  {name:<34}{v:>10}  num {m.get('num')}" + (f"  {m['verdict']}" if m.get("verdict") else ""))
    if summary.get("verdict"):
        lines.append(f"  verdict: {summary['verdict'].upper()}")
    if summary.get("models"):
        from .importers.rollup import format_models_table

        lines.append("  per model:")
        lines += format_models_table(summary["models"])
    diag = summary.get("diagnostics")
    if diag:
        o = diag.get("overall", {})
        lines.append(f"  diagnostics: {diag.get('rows')} rows; " + ", ".join(
            f"{k} {v}" for k, v in o.items() if k.endswith("rate")))
    print("\n".join(lines), file=sys.stdout)
