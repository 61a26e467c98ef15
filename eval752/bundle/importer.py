"""Import a checked bundle as a dataset folder or a completed run directory; inspect and verify.

Nothing is written outside the target folder: the bundle is extracted into a fresh temporary folder in the
target's parent, checked there, arranged into its final layout, and renamed to the target only when all is
well. On any failure the temporary folder is removed and the target does not exist.

A dataset bundle becomes ``<target>/sections/``, ``assets/`` and ``meta.json``. A run bundle becomes a run
directory: ``results.jsonl``, ``summary.json``, ``manifest.json`` (the run's own, plus ``imported_from``),
``run_config.json``, ``.hydra/config.yaml`` (the run config with ``dataset.path`` pointing at the snapshot,
``format: native``, no section filter or limit), and the dataset snapshot in ``dataset/<name>/``.

Custom checkers (``checkers/*.py``) are code. They are copied to ``<target>/checkers/`` only with
``trust_checkers=True``; nothing here ever runs them (see ``eval752.bundle.checkers``).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..rundir import read_json, write_json_atomic
from .reader import CheckedBundle, check_bundle, read_header
from .zipio import BundleError, Limits, SafeZip


def _safe_name(name: Any) -> str:
    text = re.sub(r"[^A-Za-z0-9._-]", "_", str(name or "dataset")).strip(".") or "dataset"
    return text[:80]


def _prepare_target(target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(f"{target} already exists and is not an empty folder; import into a new folder")
    if not target.parent.is_dir():
        raise ConfigError(f"{target.parent} is not a folder")


def _move(src: Path, dest: Path) -> None:
    if src.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dest)


def import_bundle(path: Path, target: Path, limits: Limits, *, trust_checkers: bool = False) -> dict[str, Any]:
    target = Path(target).absolute()
    _prepare_target(target)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.importing-", dir=target.parent))
    try:
        scratch = work / "bundle"
        checked = check_bundle(Path(path), scratch, limits)
        final = work / "final"
        final.mkdir()
        if checked.kind == "dataset":
            _arrange_dataset(checked, final)
        else:
            _arrange_run(checked, final, target, path)
        if checked.checkers and trust_checkers:
            _move(scratch / "checkers", final / "checkers")
        if target.exists():
            target.rmdir()
        os.rename(final, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"kind": checked.kind, "items": len(checked.dataset.items), "checkers": checked.checkers,
            "checkers_written": bool(checked.checkers and trust_checkers), "target": str(target)}


def _arrange_dataset(checked: CheckedBundle, dest: Path) -> None:
    _move(checked.root / "sections", dest / "sections")
    _move(checked.root / "assets", dest / "assets")
    _move(checked.root / "meta.json", dest / "meta.json")


def _arrange_run(checked: CheckedBundle, final: Path, target: Path, bundle_path: Path) -> None:
    from omegaconf import OmegaConf

    from ..config import validate

    name = _safe_name(checked.meta.get("name"))
    _arrange_dataset(checked, final / "dataset" / name)
    config = read_json(checked.root / "run_config.json")
    config.setdefault("dataset", {})
    config["dataset"].update({"path": str(target / "dataset" / name), "format": "native", "sections": None,
                              "limit": None})
    config["resume"] = None
    config["reproduce"] = None
    try:
        validate(OmegaConf.create(config))
    except ConfigError as e:
        raise BundleError(f"run_config.json is not a valid eval752 run config: {e}") from None
    (final / ".hydra").mkdir()
    OmegaConf.save(OmegaConf.create(config), final / ".hydra" / "config.yaml")
    (final / ".hydra" / "overrides.yaml").write_text("[]\n", encoding="utf-8")
    for name_ in ("results.jsonl", "summary.json", "run_config.json"):
        _move(checked.root / name_, final / name_)
    manifest = read_json(checked.root / "run_manifest.json")
    manifest["imported_from"] = {"bundle": str(Path(bundle_path).name),
                                 "bundle_created": checked.manifest.get("created"),
                                 "generator": checked.manifest.get("generator")}
    write_json_atomic(final / "manifest.json", manifest)
    from ..report.run_report import write_run_report

    write_run_report(final)  # the same page the original run wrote


def verify_bundle(path: Path, limits: Limits) -> CheckedBundle:
    """Every check of an import, into a scratch folder that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="eval752-verify-") as tmp:
        checked = check_bundle(Path(path), Path(tmp) / "bundle", limits)
    return checked


def inspect_lines(path: Path, limits: Limits) -> list[str]:
    """What a bundle says it holds (names and layout checked; contents are checked by ``verify``)."""
    with SafeZip(Path(path), limits) as zf:
        manifest, meta = read_header(zf)
        sizes = {n: zf.infos[n].file_size for n in zf.names}
    counts = manifest.get("counts", {})
    lines = [
        f"bundle:     {path}",
        f"kind:       {manifest['kind']} (format {manifest['format']} v{manifest['format_version']})",
        f"generator:  {manifest.get('generator')}  created {manifest.get('created')}",
        f"dataset:    {meta.get('name')}  version {meta.get('version_hash')}",
    ]
    if meta.get("description"):
        lines.append(f"about:      {meta['description']}")
    lines.append("counts:     " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    lines.append("sections:")
    lines += [f"  {s.get('name')}: {s.get('items')} items" for s in manifest.get("sections", []) if isinstance(s, dict)]
    lines.append("entries:")
    for name in sorted(sizes):
        note = "  (checker code: never run unless imported with --trust-checkers)" if name.startswith("checkers/") else ""
        lines.append(f"  {sizes[name]:>10}  {name}{note}")
    return lines
