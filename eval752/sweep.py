"""Sweeps (Hydra multiruns): deterministic folders, ``sweep.json``, skip and resume, and dry runs.

Folders. ``hydra.sweep.dir`` is ``${output_root}/sweeps/<sweep.id>``; the ``eval752`` command sets
``sweep.id`` to ``<sweep name>-<hash of the command's overrides>`` (launcher options, ``progress``,
``output_root`` and ``dry_run`` left out), so relaunching the same command finds the same folders. Each run's
folder (``hydra.sweep.subdir``) names only the keys the sweep varies: the command line's swept keys
(``sweep.vary``) and the keys of ``hydra.sweeper.params``, e.g. ``provider=sim,provider.temperature=0.7``.

Jobs. A job whose folder holds a complete run with the same config hash is skipped (no request); one with
partial results is resumed through ``resume``; every job records itself in ``<sweep dir>/sweep.json`` under
a file lock with an atomic rewrite, so parallel jobs (joblib, submitit) never lose each other's entries.
"""
from __future__ import annotations

import dataclasses
import hashlib
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

SWEEP_JSON = "sweep.json"
_IGNORED_FOR_ID = ("progress", "output_root", "dry_run", "sweep.id", "sweep.vary", "hydra.launcher",
                   "hydra/launcher", "hydra.sweep.", "hydra.verbose")
_SWEEP_PREFIXES = ("range(", "choice(", "glob(", "interval(", "tag(", "sort(", "shuffle(")


def _key(arg: str) -> str:
    return arg.partition("=")[0].lstrip("+~")


def _is_sweep_value(value: str) -> bool:
    if value.startswith(_SWEEP_PREFIXES):
        return True
    depth, quote = 0, ""
    for ch in value:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            return True
    return False


def sweep_overrides(args: list[str]) -> list[str]:
    """The ``sweep.id`` and ``sweep.vary`` overrides a multirun command gets (none for a single run, or when
    the command sets ``sweep.id`` itself)."""
    flags = [a for a in args if a.startswith("-")]
    pairs = [a for a in args if "=" in a and not a.startswith("-")]
    sweep_name = next((a.partition("=")[2] for a in pairs if _key(a) == "sweep"), "none")
    vary = [_key(a) for a in pairs if not _key(a).startswith("hydra") and _is_sweep_value(a.partition("=")[2])]
    multirun = "-m" in flags or "--multirun" in flags or sweep_name != "none"
    if not multirun or any(_key(a) in ("resume", "reproduce") for a in pairs):
        return []
    out = [] if vary == [] else [f"sweep.vary=[{','.join(dict.fromkeys(vary))}]"]
    if any(_key(a) == "sweep.id" for a in pairs):
        return out
    kept = sorted(a for a in args if not _key(a).startswith(_IGNORED_FOR_ID) and a not in ("-m", "--multirun"))
    digest = hashlib.sha256("\n".join(kept).encode()).hexdigest()[:10]
    name = sweep_name if sweep_name != "none" else "sweep"
    return out + [f"sweep.id={name}-{digest}"]


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.=,@+" else "_" for c in text)


def sweep_dir_name(root: str, sweep_id: Any) -> str:
    if sweep_id in (None, "", "None"):
        sweep_id = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000_000 // 1000:06d}"
    return str(Path(str(root)) / "sweeps" / _safe(str(sweep_id)))


def job_dir_name(num: Any, task: Iterable[str], vary: Iterable[str] | None, params: Any) -> str:
    """``key=value`` of the varied keys only, joined with commas; ``job<num>`` when nothing varies."""
    keys = set(vary or []) | {str(k) for k in (params or {})}
    parts = [f"{_key(o)}={o.partition('=')[2]}" for o in task if _key(o) in keys]
    name = _safe(",".join(parts))
    if len(name) > 120:
        name = name[:100] + "-" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return name or f"job{num}"


def register_resolvers() -> None:
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("eval752_sweep_dir"):
        OmegaConf.register_new_resolver("eval752_sweep_dir", sweep_dir_name, use_cache=True)
    if not OmegaConf.has_resolver("eval752_job_dir"):
        OmegaConf.register_new_resolver("eval752_job_dir", job_dir_name)


# --- sweep.json -------------------------------------------------------------------------------------------


def main_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: {"value": m.get("value"), "num": m.get("num")} for k, m in (summary.get("metrics") or {}).items()}


def record_run(sweep_dir: Path, run_dir: Path, **fields: Any) -> None:
    """Add or update this run's entry in ``sweep.json`` (file lock + atomic rewrite)."""
    from filelock import FileLock

    from .rundir import read_json, write_json_atomic

    sweep_dir.mkdir(parents=True, exist_ok=True)
    path = sweep_dir / SWEEP_JSON
    with FileLock(str(path) + ".lock", timeout=60):
        data = read_json(path) if path.exists() else {"format": "eval752.sweep/1", "sweep_dir": str(sweep_dir),
                                                      "runs": []}
        runs = [r for r in data["runs"] if r.get("name") != run_dir.name]
        old = next((r for r in data["runs"] if r.get("name") == run_dir.name), {})
        entry = {**old, "name": run_dir.name, "run_dir": str(run_dir), **fields,
                 "updated": datetime.now(timezone.utc).isoformat()}
        runs.append(entry)
        data["runs"] = sorted(runs, key=lambda r: (r.get("job", 0), r["name"]))
        data["updated"] = entry["updated"]
        write_json_atomic(path, data)


def job_state(cfg: Any, run_dir: Path) -> str:
    """``fresh``, ``skip`` (complete) or ``resume`` (results from an earlier attempt). The folder is named by
    the command's overrides; if the composed config's hash differs (eval752 or conf/ changed since), the
    existing run is still kept, with a note: remove the folder, or set ``sweep.id``, to run it anew."""
    from .app import config_hash
    from .rundir import MANIFEST, read_json

    manifest = read_json(run_dir / MANIFEST) if (run_dir / MANIFEST).is_file() else None
    if manifest is None:
        return "fresh"
    if manifest.get("config_hash") != config_hash(cfg):
        print(f"eval752: note: {run_dir} was made with config hash {str(manifest.get('config_hash'))[:12]}, "
              f"now {config_hash(cfg)[:12]} (eval752 or conf/ changed); its results are kept", file=sys.stderr)
    return "skip" if manifest.get("status") == "complete" else "resume"


def run_job(cfg: Any, run_dir: Path, sweep_dir: Path, overrides: list[str], job: int) -> dict[str, Any]:
    """One job of a sweep: skip it, resume it or run it, and record it in ``sweep.json``."""
    from .app import run_from_config
    from .rundir import MANIFEST, SUMMARY, read_json

    state = job_state(cfg, run_dir)
    base = {"job": job, "overrides": [o for o in overrides if not _key(o).startswith(("sweep.id", "sweep.vary"))]}
    if state == "skip":
        summary = read_json(run_dir / SUMMARY)
        record_run(sweep_dir, run_dir, **base, status="complete", skipped=True, requests_sent=0,
                   metrics=main_metrics(summary), verdict=summary.get("verdict"))
        print(f"skipped (already complete): {run_dir}")
        return summary
    record_run(sweep_dir, run_dir, **base, status="running", skipped=False)
    if state == "resume":
        print(f"eval752: resuming {run_dir}", file=sys.stderr)
        cfg = dataclasses.replace(cfg, resume=str(run_dir))
    try:
        summary = run_from_config(cfg, run_dir)
    except KeyboardInterrupt:
        record_run(sweep_dir, run_dir, status="interrupted")
        raise
    except BaseException as e:
        record_run(sweep_dir, run_dir, status="failed", error=str(e)[:300])
        raise
    status = read_json(run_dir / MANIFEST).get("status", "complete")
    record_run(sweep_dir, run_dir, status=status, requests_sent=(summary.get("run") or {}).get("requests_sent"),
               metrics=main_metrics(summary), verdict=summary.get("verdict"))
    return summary


# --- dry runs ---------------------------------------------------------------------------------------------

DRY_RUNS: list[dict[str, Any]] = []  # the jobs of this process (dry runs go through the in-process launcher)
ASSUMED_COMPLETION_TOKENS = 256


def _done_keys(cfg: Any, run_dir: Path, verifier: bool) -> set:
    from .rundir import load_results

    done: set = set()
    if not run_dir.is_dir():
        return done
    files = sorted(run_dir.glob("loop_*/results.jsonl")) if verifier else [run_dir / "results.jsonl"]
    for f in files:
        if not f.is_file():
            continue
        data = f.read_bytes()
        if data and not data.endswith(b"\n"):  # a partial last line: not done (and left for resume to cut)
            import json

            rows = [json.loads(x) for x in data[: data.rfind(b"\n") + 1].decode().splitlines() if x.strip()]
        else:
            rows, _ = load_results(f)
        for r in rows:
            if verifier and r.get("status") == "success":
                done.add((int(r.get("loop", 1)) - 1, r.get("data_index")))
            elif not verifier and r.get("status") == "ok":
                done.add((r.get("item_id"), r.get("sample")))
    return done


_PRICE_MAP: dict[str, Any] | None = None


def _prices(cfg: Any) -> tuple[float, float] | None:
    if cfg.provider.sim is not None:
        return None
    global _PRICE_MAP
    if _PRICE_MAP is None:
        # litellm's bundled price map, read as JSON: importing litellm itself takes seconds
        import importlib.util
        import json

        spec = importlib.util.find_spec("litellm")
        path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json" if spec and spec.origin else None
        _PRICE_MAP = json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else {}
    model = cfg.provider.model
    for name in (model, model.split("/", 1)[-1]):
        info = _PRICE_MAP.get(name)
        if info and info.get("input_cost_per_token") is not None:
            return float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0.0)
    return None


def estimate(cfg: Any, run_dir: Path) -> dict[str, Any]:
    """Requests this run would send (total minus what ``run_dir`` already holds), tokens and cost."""
    from .app import load_configured_dataset, resolve_dataset_path
    from .prompts import build_messages

    verifier = cfg.dataset.format == "verifier"
    units: list[tuple[Any, Any, list]] = []
    if verifier:
        from .verifier.rows import load_prompt_rows, prompt_row_to_request

        prompts = load_prompt_rows(resolve_dataset_path(cfg.dataset.path))[: cfg.dataset.limit]
        for p in prompts:
            body = prompt_row_to_request(p)
            units += [((loop, p.data_index), body.get("max_tokens"), body["messages"])
                      for loop in range(cfg.verifier.loops)]
    else:
        dataset = load_configured_dataset(cfg)
        for item in dataset.items:
            msgs = build_messages(item, cfg.dataset, dataset.asset_path)
            units += [((item.id, s), item.params.get("max_tokens"), msgs) for s in range(cfg.samples)]
    state = "fresh"
    if (run_dir / "manifest.json").is_file():
        state = job_state(dataclasses.replace(cfg, dry_run=False), run_dir)
    done = {u[0] for u in units} if state == "skip" else _done_keys(cfg, run_dir, verifier)
    todo = [u for u in units if u[0] not in done]
    prompt_chars = sum(len(str(m.get("content") or "")) for u in todo for m in u[2])
    completion = sum(int(u[1] or cfg.provider.max_tokens or ASSUMED_COMPLETION_TOKENS) for u in todo)
    prompt_tokens = prompt_chars // 4
    prices = _prices(cfg) if todo else None
    cost = None if prices is None else round(prompt_tokens * prices[0] + completion * prices[1], 6)
    return {"run_dir": str(run_dir), "requests": len(todo), "total": len(units), "done": len(units) - len(todo),
            "prompt_tokens": prompt_tokens, "completion_tokens": completion, "cost_usd": cost,
            "assumed_max_tokens": cfg.provider.max_tokens is None}


def dry_run_job(cfg: Any, run_dir: Path) -> dict[str, Any]:
    est = estimate(cfg, run_dir)
    DRY_RUNS.append(est)
    cost = "unknown price" if est["cost_usd"] is None else f"~${est['cost_usd']:.4f}"
    print(f"dry run: {run_dir}: {est['requests']} requests (of {est['total']}, {est['done']} done), "
          f"~{est['prompt_tokens']} prompt + {est['completion_tokens']} completion tokens, {cost}")
    # a single run's fresh folder holds only Hydra's files: leave nothing behind
    if run_dir.is_dir() and not (run_dir / "manifest.json").exists() and "/sweeps/" not in str(run_dir):
        import shutil

        if {p.name for p in run_dir.iterdir()} <= {".hydra", "eval752.log"}:
            shutil.rmtree(run_dir, ignore_errors=True)
    return est


def print_dry_run_total() -> None:
    if len(DRY_RUNS) < 2:
        return
    n = sum(e["requests"] for e in DRY_RUNS)
    costs = [e["cost_usd"] for e in DRY_RUNS]
    known = [c for c in costs if c is not None]
    cost = "unknown price" if not known else f"~${sum(known):.4f}" + (
        f" for the {len(known)} runs with a known price" if len(known) < len(costs) else "")
    tokens = sum(e["prompt_tokens"] + e["completion_tokens"] for e in DRY_RUNS)
    print(f"dry run: sweep of {len(DRY_RUNS)} runs: {n} requests, ~{tokens} tokens, {cost}; nothing was sent")
