"""One evaluation run, from a validated config to a finished run directory. No Hydra in here."""
from __future__ import annotations

import contextlib
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from . import manifest as manifest_mod
from .checkers.base import CHECKERS, DEFAULT_CHECKER_FOR_TYPE, Checker, checker_spec
from .config import RunConfig, to_container
from .errors import ConfigError, Eval752Error
from .metrics import summarise
from .prompts import build_messages
from .rundir import (MANIFEST, RESULTS, SUMMARY, ResultsWriter, keep_completed, load_results, read_json,
                     rewrite_results, write_json_atomic)
from .runner import Runner, Unit
from .types import Item, Request, canonical_json, sha256_of

BUILTIN_DATA = Path(__file__).resolve().parent / "data"


def resolve_dataset_path(path: str) -> Path:
    if path.startswith("builtin:"):
        return BUILTIN_DATA / path[len("builtin:"):]
    return Path(path).expanduser()


def load_configured_dataset(cfg: RunConfig):
    from .datasets import load_any

    path = resolve_dataset_path(cfg.dataset.path)
    if not path.exists():
        raise ConfigError(f"dataset.path {cfg.dataset.path!r}: no such file or folder ({path})")
    dataset, warnings = load_any(path, format=cfg.dataset.format, sections=cfg.dataset.sections,
                                 limit=cfg.dataset.limit)
    for w in warnings:
        print(f"eval752: warning: {w}", file=sys.stderr)
    return dataset


class CheckerChooser:
    """Which checker scores an item: ``checker.force`` > the item's own > ``checker.by_type`` > the type's default.
    Every distinct checker is built once, up front, so a bad name fails before any request."""

    def __init__(self, cfg: RunConfig, items: tuple[Item, ...]) -> None:
        import eval752.checkers  # noqa: F401  (registers the built-in checkers)

        self.cfg = cfg
        self._built: dict[str, tuple[str, Checker]] = {}
        problems = []
        for item in items:
            try:
                self.for_item(item)
            except (ConfigError, ValueError, TypeError) as e:
                problems.append(f"item {item.id!r}: {e}")
        if problems:
            raise ConfigError("cannot score these items:\n" + "\n".join(problems[:20]))

    def spec_for(self, item: Item) -> Any:
        c = self.cfg.checker
        if c.force is not None:
            return c.force
        if item.checker is not None:
            return item.checker
        if item.type in c.by_type:
            return c.by_type[item.type]
        return DEFAULT_CHECKER_FOR_TYPE[item.type]

    def for_item(self, item: Item) -> tuple[str, Checker]:
        spec = self.spec_for(item)
        key = canonical_json(spec)
        if key not in self._built:
            kind, options = checker_spec(spec)
            checker = CHECKERS.create(kind, **options)
            if hasattr(checker, "bind_run_config"):  # LLM judges read the run's `judge` section
                checker.bind_run_config(self.cfg)
            self._built[key] = (kind, checker)
        return self._built[key]


@contextlib.contextmanager
def provider_endpoint(cfg: RunConfig, items: tuple[Item, ...]) -> Iterator[tuple[str | None, str, bool]]:
    """``(api_base, cache identity, send item header)``; starts the simulated vendor when configured."""
    p = cfg.provider
    if p.sim is None:
        if p.api_base:
            from .providers.provider import check_reachable

            check_reachable(p.api_base)
        yield p.api_base, f"{p.model}@{p.api_base or ''}", False
        return
    from .providers.sim import AnswerKey, start_in_thread
    from .providers.simconfig import sim_settings

    settings = sim_settings(p.sim, model=p.model)
    with start_in_thread(settings, AnswerKey.from_items(items)) as handle:
        identity = f"sim:{p.model}#{sha256_of(to_container(cfg)['provider']['sim'])[:16]}"
        yield handle.base_url, identity, True


def config_hash(cfg: RunConfig) -> str:
    c = to_container(cfg)
    for k in ("resume", "reproduce", "progress"):
        c.pop(k, None)
    return sha256_of(c)


def run_from_config(cfg: RunConfig, run_dir: Path) -> dict[str, Any]:
    from .providers.cache import ResponseCache
    from .providers.provider import Provider, preflight, run_with_provider

    if cfg.dataset.format == "verifier":
        from .verifier.live import run_verifier

        preflight(cfg.provider)  # key variable, sim behaviours, endpoint: refused before anything is written
        verifier_summary = run_verifier(cfg, run_dir)
        from .report import write_run_report

        write_run_report(run_dir)  # a self-contained report.html beside the results
        return verifier_summary
    dataset = load_configured_dataset(cfg)
    items = dataset.items
    if not items:
        raise ConfigError("the dataset selection has no items")
    vision = dataset.items_needing_vision()
    if vision and not cfg.provider.vision:
        shown = ", ".join(vision[:10]) + (f" and {len(vision) - 10} more" if len(vision) > 10 else "")
        raise ConfigError(
            f"{len(vision)} items have images but provider {cfg.provider.name!r} is not configured for them "
            f"(provider.vision=false): {shown}. Set provider.vision=true for a vision model."
        )
    chooser = CheckerChooser(cfg, items)
    preflight(cfg.provider)  # key variable, sim behaviours, endpoint: refused before anything is written
    run_dir.mkdir(parents=True, exist_ok=True)
    results_path = run_dir / RESULTS
    done_keys: set[tuple[str, int]] = set()
    started = datetime.now(timezone.utc).isoformat()
    if cfg.resume:
        wanted = {(item.id, s) for item in items for s in range(cfg.samples)}
        done_keys, started = _prepare_resume(run_dir, dataset.version_hash, wanted)
    elif results_path.exists() and results_path.stat().st_size:
        raise ConfigError(f"{run_dir} already holds results; use resume={run_dir} to finish it")

    manifest = manifest_mod.build(cfg, dataset, config_hash(cfg), started)
    write_json_atomic(run_dir / MANIFEST, manifest)
    units = [Unit(item, s) for item in items for s in range(cfg.samples) if (item.id, s) not in done_keys]
    total = len(items) * cfg.samples
    cache = ResponseCache(cfg.cache.path) if cfg.cache.enabled else None
    interrupted = False
    with provider_endpoint(cfg, items) as (api_base, identity, item_header):
        provider = Provider(cfg.provider, api_base=api_base, identity=identity, cache=cache,
                            send_item_header=item_header)
        base = provider.base_params()

        def request_for(item: Item, sample: int) -> Request:
            params = {**base, **item.params}
            if "seed" in params and params["seed"] is not None:
                params["seed"] = int(params["seed"]) + sample
            return Request(item_id=item.id, sample=sample,
                           messages=build_messages(item, cfg.dataset, dataset.asset_path), params=params)

        writer = ResultsWriter(results_path)
        runner = Runner(provider, checker_for=chooser.for_item, request_for=request_for, write=writer.write,
                        concurrency=cfg.provider.concurrency, progress=cfg.progress, total=total,
                        done=total - len(units))

        try:
            interrupted = run_with_provider(provider, lambda: runner.run(units))
        finally:
            writer.close()
            if cache is not None:
                cache.close()

    rows, _ = load_results(results_path)
    summary = summarise(rows, samples=cfg.samples)
    summary["run"] = {"name": cfg.run_name, "dataset": dataset.name, "provider": cfg.provider.name,
                      "model": cfg.provider.model, "seconds": round(runner.stats.seconds, 3),
                      "requests_sent": runner.stats.sent - runner.stats.cached}
    limiter = getattr(provider, "adaptive", None)
    if limiter is not None:  # adaptive concurrency (AIMD on 429s): how far it had to back off
        summary["run"]["concurrency"] = {"ceiling": limiter.ceiling, "lowest": limiter.lowest,
                                         "final": limiter.limit, "decreases": limiter.decreases}
    write_json_atomic(run_dir / SUMMARY, summary)
    complete = not interrupted and len(rows) == total
    manifest.update(manifest_mod.finish(summary, complete=complete, interrupted=interrupted))
    write_json_atomic(run_dir / MANIFEST, manifest)
    from .report import write_run_report

    write_run_report(run_dir)  # a self-contained report.html beside the results
    print_summary(summary, run_dir)
    if interrupted:
        print(f"interrupted: resume with  eval752 resume={run_dir}", file=sys.stderr)
        print(run_dir)
        raise KeyboardInterrupt
    print(run_dir)
    return summary


def _prepare_resume(run_dir: Path, dataset_hash: str,
                    wanted: set[tuple[str, int]] | None = None) -> tuple[set[tuple[str, int]], str]:
    mpath = run_dir / MANIFEST
    started = datetime.now(timezone.utc).isoformat()
    if mpath.exists():
        old = read_json(mpath)
        old_hash = (old.get("dataset") or {}).get("version_hash")
        if old_hash and old_hash != dataset_hash:
            raise Eval752Error(
                f"cannot resume {run_dir}: its results were made with dataset version {old_hash[:12]}, "
                f"but the configured dataset is version {dataset_hash[:12]}"
            )
        started = old.get("started") or started
    rows, notes = load_results(run_dir / RESULTS)
    strays = [r for r in rows if wanted is not None and (r.get("item_id"), r.get("sample")) not in wanted]
    if strays:  # results of another dataset (or selection) copied in: never mix them into this run
        shown = ", ".join(repr(r.get("item_id")) for r in strays[:3])
        raise Eval752Error(
            f"cannot resume {run_dir}: {RESULTS} has {len(strays)} rows for items or samples the configured "
            f"dataset does not have (first: {shown}); it was not made with this dataset"
        )
    for n in notes:
        print(f"eval752: {n}", file=sys.stderr)
    kept, dropped = keep_completed(rows)
    if dropped or notes:
        rewrite_results(run_dir / RESULTS, kept)
    if dropped:
        print(f"eval752: resuming: {dropped} failed or duplicate rows will be retried", file=sys.stderr)
    return {(r["item_id"], int(r["sample"])) for r in kept}, started


def print_summary(summary: dict[str, Any], run_dir: Path) -> None:
    c = summary["counts"]
    lines = [f"{summary.get('run', {}).get('name', '')}: {c['items']} items x {c['samples']} samples, "
             f"{c['ok']} ok, {c['failed']} failed, {c['cached']} cached"]
    lines.append(f"{'metric':<22}{'value':>10}{'num':>8}  95% CI")
    for name, m in summary["metrics"].items():
        v = "-" if m["value"] is None else f"{m['value']:.4f}"
        ci = f"[{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]" if "ci95" in m else ""
        lines.append(f"{name:<22}{v:>10}{m['num']:>8}  {ci}")
    if len(summary["by_type"]) > 1:
        for t, b in summary["by_type"].items():
            m = b["score"]
            lines.append(f"{'  type ' + t:<22}{m['value']:>10.4f}{m['num']:>8}")
    print("\n".join(lines))
