"""The live vendor verifier: send every prompt row ``verifier.loops`` times, score each response as it comes
back, and write upstream's per-loop files plus eval752's verdicts. Entered from ``app.run_from_config``
when ``dataset.format == "verifier"``; knows nothing of Hydra.

Run directory::

    loop_01/results.jsonl                 upstream-shaped result rows (data_index, request, response, status,
                                          finish_reason, validator fields; plus loop, attempts, latency_s)
    loop_01/<provider>_summary.json       upstream's per-loop summary (loop_summary)
    loop_01/batch_report.json             upstream's per-loop batch report
    metrics_report.json                   upstream's report over the loops (build_metrics_report)
    summary.json                          eval752's: value, num, per-loop values, spread, verdict per metric
    manifest.json, .hydra/

With ``verifier.flavour=k2`` (MoonshotAI K2-Vendor-Verifier, ``k2.py``) the loop files are K2VV's:
``loop_NN/results.jsonl`` (K2VV result rows), ``loop_NN/summary.json`` (K2VV's summary), with a baseline
``loop_NN/comparison.json``; ``k2_report.json`` replaces ``metrics_report.json``. ``verifier.fail_on_verdict``
raises ``VerdictFailed`` (exit status 1) after everything is written when a verdict fails.

Rows are appended and flushed one by one (``rundir.ResultsWriter``), so a killed run keeps every finished
row; ``resume=<run_dir>`` keeps the first successful row per (loop, data_index) and sends the rest again.

Loops are real repeats: request ``(loop L, row i)`` is ``Request(item_id=str(i), sample=L)``, so the
response cache keys differ per loop, and a configured ``seed`` is sent as ``seed + L`` (as the main runner
does per sample). The item id goes out as the ``X-Eval752-Item`` header to the simulated vendor, whose
answer key holds one entry per row (id ``str(data_index)``, type ``verifier``, answer ``{"expected_tool_call",
"checks"}``): that is how the sim's ``official`` behaviour follows each row's label.
"""
from __future__ import annotations

import difflib
import hashlib
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Mapping, Sequence

from .. import manifest as manifest_mod
from ..config import RunConfig
from ..errors import ConfigError, Eval752Error
from ..runner import drain
from ..rundir import MANIFEST, SUMMARY, ResultsWriter, load_results, read_json, rewrite_results, write_json_atomic
from ..types import Item, Request, Response
from .aggregate import DEFAULT_THRESHOLDS, Threshold, aggregate_loops, build_metrics_report, trigger_similarity
from .responses import response_to_chat_completion
from .rows import PromptRow, load_prompt_rows, load_result_rows, prompt_row_to_request
from .scoring import write_json
from .summary import build_batch_report, loop_summary
from .validators import RowToCheck, validate_rows

RESULTS = "results.jsonl"
METRICS_REPORT = "metrics_report.json"
METRIC_NAMES = (
    "query_success_rate", "tool_calls_match_rate", "schema_accuracy", "error_only_reasoning_rate",
    "language_following_success_rate", "repeat_ngram_pass_rate", "scenario_check_pass_rate",
    "trigger_f1", "trigger_precision", "trigger_recall", "tool_calls_count_cosine",
)  # fmt: skip
_NOT_PARAMS = ("model", "messages", "tools", "stream", "stream_options")


class VerdictFailed(Eval752Error):
    """``verifier.fail_on_verdict=true`` and a metric's verdict is "fail": the command exits with status 1
    after writing every file and printing the run directory."""

    exit_code = 1


def loop_dir(run_dir: Path, loop: int) -> Path:
    """``loop`` is 0-based; folders are numbered from 1 as upstream's ``loop_NN``."""
    return run_dir / f"loop_{loop + 1:02d}"


# --- configuration ----------------------------------------------------------------------------------------


def parse_threshold(name: str, spec: Any) -> Threshold:
    """``{kind, target, tolerance}``, ``">= 0.98"``, ``"<= 0"``, ``"0.98 +- 0.01"``, or a bare number (the
    default rule's kind with a new target; ``at_least`` for a metric without a default)."""
    base = DEFAULT_THRESHOLDS.get(name, Threshold("at_least", 1.0))
    try:
        if isinstance(spec, Mapping):
            return Threshold(str(spec.get("kind", base.kind)), float(spec["target"]),
                             float(spec.get("tolerance", base.tolerance if "kind" not in spec else 0.0)))
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):
            return Threshold(base.kind, float(spec), base.tolerance)
        text = str(spec).strip()
        m = re.fullmatch(r"(>=|<=)\s*([-+0-9.eE]+)", text)
        if m:
            return Threshold("at_least" if m.group(1) == ">=" else "at_most", float(m.group(2)))
        m = re.fullmatch(r"([-+0-9.eE]+)\s*(?:\+-|±)\s*([-+0-9.eE]+)", text)
        if m:
            return Threshold("within", float(m.group(1)), float(m.group(2)))
    except (KeyError, TypeError, ValueError):
        pass
    raise ConfigError(f"verifier.thresholds.{name}: {spec!r} is not a threshold; write '>= 0.98', '<= 0', "
                      f"'0.98 +- 0.01', a number, or {{kind, target, tolerance}}")


def parse_thresholds(overrides: Mapping[str, Any]) -> dict[str, Threshold]:
    out = {}
    for name, spec in (overrides or {}).items():
        if name not in METRIC_NAMES:
            close = difflib.get_close_matches(name, METRIC_NAMES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"verifier.thresholds: unknown metric {name!r}{hint}; valid: {', '.join(METRIC_NAMES)}")
        rule = parse_threshold(name, spec)
        if rule.kind not in ("at_least", "at_most", "within"):
            raise ConfigError(f"verifier.thresholds.{name}: kind must be at_least, at_most or within")
        out[name] = rule
    return out


def load_baseline(path: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(name, rows)`` per official loop. A results file is one loop; a folder is read as an eval752
    verifier run (``loop_*/results.jsonl``), a folder of ``loop_*.jsonl`` files, or an upstream model folder
    (``loop_*/*/*_results.jsonl``), whichever matches first."""
    p = Path(path).expanduser()
    if p.is_file():
        return [(str(p), load_result_rows(p))]
    if not p.is_dir():
        raise ConfigError(f"verifier.baseline {path!r}: no such file or folder")
    for pattern in (f"loop_*/{RESULTS}", "loop_*.jsonl", "loop_*/*/*_results.jsonl", "*_results.jsonl"):
        found = sorted(p.glob(pattern), key=str)
        if found:
            return [(str(f), load_result_rows(f)) for f in found]
    raise ConfigError(f"verifier.baseline {path!r}: no loop_*/results.jsonl, loop_*.jsonl or *_results.jsonl inside")


def answer_key_items(prompts: Sequence[PromptRow]) -> tuple[Item, ...]:
    """What the simulated vendor is told per row (see the module docstring)."""
    return tuple(Item(id=str(p.data_index), type="verifier", text="",
                      answer={"expected_tool_call": p.expected_tool_call, "checks": list(p.validators())})
                 for p in prompts)


# --- resume -----------------------------------------------------------------------------------------------


def _prepare_run_dir(cfg: RunConfig, run_dir: Path, dataset_hash: str, indexes: set[int]) -> tuple[set, str]:
    """The (loop, data_index) pairs already done, and the run's start time. A resume repairs each loop file
    (partial last line cut, failed and duplicate rows dropped); a fresh run refuses a used directory."""
    started = datetime.now(timezone.utc).isoformat()
    files = [loop_dir(run_dir, loop) / RESULTS for loop in range(cfg.verifier.loops)]
    if not cfg.resume:
        if any(f.exists() and f.stat().st_size for f in files):
            raise ConfigError(f"{run_dir} already holds results; use resume={run_dir} to finish it")
        return set(), started
    if (run_dir / MANIFEST).exists():
        old = read_json(run_dir / MANIFEST)
        old_hash = (old.get("dataset") or {}).get("version_hash")
        if old_hash and old_hash != dataset_hash:
            raise Eval752Error(f"cannot resume {run_dir}: its results were made with prompt file version "
                               f"{old_hash[:12]}, but the configured file is version {dataset_hash[:12]}")
        started = old.get("started") or started
    done: set[tuple[int, int]] = set()
    retried = 0
    for loop, path in enumerate(files):
        rows, notes = load_results(path)
        for note in notes:
            print(f"eval752: {note}", file=sys.stderr)
        kept = []
        for row in rows:
            key = (loop, row.get("data_index"))
            if row.get("status") != "success" or key in done or key[1] not in indexes:
                retried += 1
                continue
            done.add(key)
            kept.append(row)
        if len(kept) != len(rows) or notes:
            rewrite_results(path, kept)
    if retried:
        print(f"eval752: resuming: {retried} failed or duplicate rows will be sent again", file=sys.stderr)
    return done, started


# --- sending ----------------------------------------------------------------------------------------------


class LoopSender:
    """Builds each (loop, row) request, sends it, scores the response and appends the row to its loop file."""

    def __init__(self, cfg: RunConfig, provider: Any, run_dir: Path, model: str) -> None:
        self.cfg = cfg
        self.provider = provider
        self.model = model
        self.base = provider.base_params()
        self.writers: dict[int, ResultsWriter] = {}
        self.run_dir = run_dir
        self.failed = 0
        self.cached = 0

    def request_for(self, prompt: PromptRow, loop: int) -> tuple[Request, dict[str, Any]]:
        if self.cfg.verifier.flavour == "k2":  # K2VV sends the row as written (only _input -> system)
            from .k2 import k2_request

            body = k2_request(prompt)
        else:
            body = prompt_row_to_request(prompt)
        params = {**self.base, **{k: v for k, v in body.items() if k not in _NOT_PARAMS}}
        if params.get("seed") is not None:
            params["seed"] = int(params["seed"]) + loop
        tools = body.get("tools") or None
        sent = {"model": self.model, "messages": body["messages"], **({"tools": tools} if tools else {}), **params}
        request = Request(item_id=str(prompt.data_index), sample=loop, messages=tuple(body["messages"]),
                          params=params, tools=tuple(tools) if tools else None)
        return request, sent

    def score(self, prompt: PromptRow, loop: int, sent: dict[str, Any], response: Response) -> dict[str, Any]:
        status, body = response_to_chat_completion(response)
        if self.cfg.verifier.flavour == "k2":  # K2VV's row shape, then eval752's extras
            from .k2 import k2_result_row

            return k2_result_row(prompt.data_index, sent, status, body, duration_s=response.latency_s or 0.0,
                                 loop=loop + 1, attempts=max(1, response.attempts),
                                 latency_s=response.latency_s, cached=response.cached)
        choices = body.get("choices") or [{}]
        row: dict[str, Any] = {
            "data_index": prompt.data_index,
            "loop": loop + 1,
            "request": sent,
            "response": body,
            "status": status,
            "finish_reason": choices[0].get("finish_reason"),
            "expected_tool_call": prompt.expected_tool_call,
            "attempts": max(1, response.attempts),
            "latency_s": response.latency_s,
            "cached": response.cached,
        }
        check = RowToCheck(sent, body, status, prompt.validators())
        row.update(validate_rows([check], n=self.cfg.verifier.n, threshold=self.cfg.verifier.threshold)[0])
        return row

    def write(self, loop: int, row: dict[str, Any]) -> None:
        if loop not in self.writers:
            folder = loop_dir(self.run_dir, loop)
            folder.mkdir(parents=True, exist_ok=True)
            self.writers[loop] = ResultsWriter(folder / RESULTS)
        self.writers[loop].write(row)

    async def one(self, prompt: PromptRow, loop: int) -> None:
        request, sent = self.request_for(prompt, loop)
        response = await self.provider.complete(request)
        self.failed += not response.ok
        self.cached += response.cached
        self.write(loop, self.score(prompt, loop, sent, response))

    async def run(self, units: list[tuple[int, PromptRow]], total: int, done: int) -> None:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=done, unit="req", disable=not self.cfg.progress, dynamic_ncols=True,
                   mininterval=0.25, desc="verifier")

        async def handle(unit: tuple[int, PromptRow]) -> None:
            loop, prompt = unit
            await self.one(prompt, loop)
            bar.update(1)
            bar.set_postfix(failed=self.failed, refresh=False)

        try:
            await drain(units, handle, self.cfg.provider.concurrency)
        finally:
            bar.close()

    def close(self) -> None:
        for w in self.writers.values():
            w.close()


# --- the run ----------------------------------------------------------------------------------------------


def run_verifier(cfg: RunConfig, run_dir: Path) -> dict[str, Any]:
    from ..app import config_hash, provider_endpoint, resolve_dataset_path
    from ..providers.cache import ResponseCache
    from ..providers.provider import Provider, run_with_provider
    from ..providers.transports import bare_model_name

    path = resolve_dataset_path(cfg.dataset.path)
    if not path.is_file():
        raise ConfigError(f"dataset.path {cfg.dataset.path!r}: no such prompt file ({path})")
    prompts = load_prompt_rows(path)[: cfg.dataset.limit]
    if not prompts:
        raise ConfigError(f"dataset.path {cfg.dataset.path!r}: the prompt file has no rows")
    thresholds = parse_thresholds(cfg.verifier.thresholds)
    k2 = cfg.verifier.flavour == "k2"
    if k2:
        from .k2 import load_k2_baseline

        baseline = load_k2_baseline(cfg.verifier.baseline) if cfg.verifier.baseline else None
        for note in (n for b in baseline or [] for n in b.notes):
            print(f"eval752: {note}", file=sys.stderr)
    else:
        baseline = load_baseline(cfg.verifier.baseline) if cfg.verifier.baseline else None
    loops = cfg.verifier.loops
    dataset_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    run_dir.mkdir(parents=True, exist_ok=True)
    done, started = _prepare_run_dir(cfg, run_dir, dataset_hash, {p.data_index for p in prompts})

    dataset = SimpleNamespace(name=cfg.dataset.name, version_hash=dataset_hash, items=prompts, sections=[])
    manifest = manifest_mod.build(cfg, dataset, config_hash(cfg), started)
    manifest["verifier"] = {"loops": loops, "baseline": cfg.verifier.baseline, "prompt_file": str(path),
                            "flavour": cfg.verifier.flavour}
    write_json_atomic(run_dir / MANIFEST, manifest)

    units = [(loop, p) for loop in range(loops) for p in prompts if (loop, p.data_index) not in done]
    total = loops * len(prompts)
    model = bare_model_name(cfg.provider.model)
    cache = ResponseCache(cfg.cache.path) if cfg.cache.enabled else None
    interrupted = False
    sender = None
    with provider_endpoint(cfg, answer_key_items(prompts)) as (api_base, identity, item_header):
        provider = Provider(cfg.provider, api_base=api_base, identity=identity, cache=cache,
                            send_item_header=item_header)
        sender = LoopSender(cfg, provider, run_dir, model)

        try:
            interrupted = run_with_provider(provider, lambda: sender.run(units, total, total - len(units)))
        finally:
            sender.close()
            if cache is not None:
                cache.close()

    loop_rows = []
    for loop in range(loops):
        rows, _ = load_results(loop_dir(run_dir, loop) / RESULTS)
        loop_rows.append(sorted(rows, key=lambda r: r["data_index"]))
    n_rows = sum(len(r) for r in loop_rows)
    if interrupted:
        manifest.update(status="interrupted", ended=datetime.now(timezone.utc).isoformat())
        write_json_atomic(run_dir / MANIFEST, manifest)
        print(f"interrupted after {n_rows} of {total} rows: resume with  eval752 resume={run_dir}", file=sys.stderr)
        print(run_dir)
        raise KeyboardInterrupt
    if k2:
        summary = write_k2_run_reports(cfg, run_dir, prompts, loop_rows, baseline, thresholds, model)
    else:
        summary = write_reports(cfg, run_dir, prompts, loop_rows, baseline, thresholds, model)
    summary["run"].update(requests_sent=provider.calls, cached=sender.cached)
    write_json_atomic(run_dir / SUMMARY, summary)
    manifest.update(status="complete" if n_rows == total else "incomplete",
                    ended=datetime.now(timezone.utc).isoformat(), counts=summary["counts"],
                    verdict=summary["verdict"])
    write_json_atomic(run_dir / MANIFEST, manifest)
    print_verdicts(summary)
    print(run_dir)
    if cfg.verifier.fail_on_verdict and summary["verdict"] == "fail":
        failed = [k for k, m in summary["metrics"].items() if m.get("verdict") == "fail"]
        raise VerdictFailed(f"verdict FAIL ({', '.join(failed)}); verifier.fail_on_verdict=true")
    return summary


def write_k2_run_reports(cfg: RunConfig, run_dir: Path, prompts: Sequence[PromptRow], loop_rows: list[list[dict]],
                         baseline: Any, thresholds: Mapping[str, Threshold], model: str) -> dict[str, Any]:
    """The K2 flavour's files (``eval752.verifier.k2.write_k2_reports``) and ``summary.json``'s content."""
    from .k2 import write_k2_reports

    out = write_k2_reports(run_dir, loop_rows, baseline, thresholds, model,
                           loop_dir_name=lambda loop: loop_dir(run_dir, loop).name)
    ok = sum(1 for rows in loop_rows for r in rows if r.get("status") == "success")
    n = sum(len(rows) for rows in loop_rows)
    out["counts"] = {"prompts": len(prompts), "loops": len(loop_rows), "rows": n, "ok": ok, "failed": n - ok,
                     "attempts": sum(int(r.get("attempts") or 1) for rows in loop_rows for r in rows)}
    out["run"] = {"name": cfg.run_name, "dataset": cfg.dataset.name, "provider": cfg.provider.name, "model": model}
    return out


def write_reports(cfg: RunConfig, run_dir: Path, prompts: Sequence[PromptRow], loop_rows: list[list[dict]],
                  baseline: list[tuple[str, list[dict]]] | None, thresholds: Mapping[str, Threshold],
                  model: str) -> dict[str, Any]:
    """Per-loop summaries and batch reports, trigger similarity, ``metrics_report.json``; returns the
    content of ``summary.json``."""
    now = datetime.now(timezone.utc).isoformat()
    summaries, files, sims = [], [], []
    for loop, rows in enumerate(loop_rows):
        folder = loop_dir(run_dir, loop)
        folder.mkdir(parents=True, exist_ok=True)
        summary = loop_summary(rows, model=model)
        name = f"{cfg.provider.name}_summary.json"
        write_json(summary, folder / name)
        write_json(build_batch_report(summary, provider=cfg.provider.name, test_file=cfg.dataset.path,
                                      output_file=str(folder / RESULTS), summary_file=str(folder / name),
                                      completed_at=now, generated_at=now), folder / "batch_report.json")
        summaries.append(summary)
        files.append(f"{folder.name}/{name}")
        sims.append(None)
        if baseline:
            official_name, official = baseline[loop % len(baseline)]
            official_dist = None
            if any("tool_calls_finish_reason" in r for r in official):
                official_dist = loop_summary(official).get("tool_calls_count_distribution")
            sim = trigger_similarity(official, rows, official_distribution=official_dist,
                                     model_distribution=summary.get("tool_calls_count_distribution")
                                     if official_dist is not None else None)
            sims[-1] = {**sim, "baseline": official_name}
    labelled = sum(1 for p in prompts if p.expected_tool_call is not None)
    plain = [{k: v for k, v in sim.items() if k != "baseline"} if sim else None for sim in sims]
    report = build_metrics_report(summaries, files=files, expected_total=labelled or None, similarities=plain)
    write_json(report, run_dir / METRICS_REPORT)
    out = aggregate_loops(summaries, similarities=sims, thresholds=thresholds)
    ok = sum(1 for rows in loop_rows for r in rows if r.get("status") == "success")
    n = sum(len(rows) for rows in loop_rows)
    out["counts"] = {"prompts": len(prompts), "loops": len(loop_rows), "rows": n, "ok": ok, "failed": n - ok,
                     "attempts": sum(s["all_count"] for s in summaries)}
    if baseline:
        out["trigger_similarity"] = sims
    out["run"] = {"name": cfg.run_name, "dataset": cfg.dataset.name, "provider": cfg.provider.name, "model": model}
    return out


def print_verdicts(summary: Mapping[str, Any]) -> None:
    c = summary["counts"]
    lines = [f"{summary['run']['name']}: {c['prompts']} prompts x {c['loops']} loops, {c['ok']} ok, "
             f"{c['failed']} failed, {c['attempts']} attempts",
             f"{'metric':<32}{'value':>8}{'num':>6}  {'threshold':<14}verdict"]
    for name, m in summary["metrics"].items():
        value = "-" if m["value"] is None else f"{m['value']:.4f}"
        lines.append(f"{name:<32}{value:>8}{m['num']:>6}  {m.get('threshold', ''):<14}{m.get('verdict', '')}")
    lines.append(f"verdict: {summary['verdict'].upper()}")
    print("\n".join(lines))
