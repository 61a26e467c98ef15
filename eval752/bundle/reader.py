"""Check a bundle completely: safe extraction into a scratch folder, then every promise of its manifest.

``check_bundle(path, scratch, limits)`` extracts every entry into ``scratch`` (a folder the caller owns and
removes) through ``SafeZip``, then checks, in order: manifest.json present, JSON, format and version;
meta.json present and JSON; the layout (only known top-level files, ``sections/<name>.jsonl``,
``assets/...``, ``checkers/*.py``); every entry's size and sha256 against the manifest, with nothing
unlisted and nothing missing; the section list and item counts; the items themselves (eval752's dataset
loader: UTF-8, JSON, fields, assets); meta.json's version hash against the dataset's; and, for run
bundles, the run files. Each failure raises ``BundleError`` with its own message.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets import Dataset, load_dataset
from ..errors import DatasetError
from .export import FORMAT, FORMAT_VERSION, SCHEMA_VERSION
from .zipio import BundleError, Limits, SafeZip

DATASET_FILES = ("manifest.json", "meta.json")
RUN_FILES = ("run_config.json", "run_manifest.json", "results.jsonl", "summary.json")
FOLDERS = ("sections/", "assets/", "checkers/")


@dataclass
class CheckedBundle:
    root: Path  # the scratch folder holding the extracted entries
    manifest: dict[str, Any]
    meta: dict[str, Any]
    dataset: Dataset
    names: list[str]

    @property
    def kind(self) -> str:
        return self.manifest["kind"]

    @property
    def checkers(self) -> list[str]:
        return sorted(n for n in self.names if n.startswith("checkers/"))


def parse_json(data: bytes, name: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise BundleError(f"{name} is not valid UTF-8 (byte offset {e.start})") from None
    except json.JSONDecodeError as e:
        raise BundleError(f"{name} is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None


def layout_problem(name: str) -> str | None:
    if name in DATASET_FILES or name in RUN_FILES:
        return None
    if name.startswith("sections/"):
        rest = name[len("sections/"):]
        if "/" in rest:
            return f"section file {name!r} is inside a sub-folder; sections are sections/<name>.jsonl"
        if not rest.endswith(".jsonl") or rest == ".jsonl" or rest.startswith("."):
            return f"section file {name!r} is not a .jsonl file"
        return None
    if name.startswith("assets/"):
        return None
    if name.startswith("checkers/"):
        if "/" in name[len("checkers/"):] or not name.endswith(".py"):
            return f"checker file {name!r} is not checkers/<name>.py"
        return None
    return (f"unexpected entry {name!r}; a bundle holds {', '.join(DATASET_FILES + RUN_FILES)} "
            f"and the folders {', '.join(FOLDERS)}")


def read_header(zf: SafeZip) -> tuple[dict[str, Any], dict[str, Any]]:
    """manifest.json and meta.json, checked for presence, JSON and format version."""
    if "manifest.json" not in zf.names:
        raise BundleError("bundle has no manifest.json (is this an eval752 bundle?)")
    manifest = parse_json(zf.read("manifest.json"), "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"manifest.json does not describe an eval752 bundle (format {FORMAT!r} expected)")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BundleError(f"unknown bundle format version {version!r}; this eval752 reads version {FORMAT_VERSION}")
    if manifest.get("kind") not in ("dataset", "run"):
        raise BundleError(f"manifest.json: kind must be 'dataset' or 'run', got {manifest.get('kind')!r}")
    for key, kind in (("entries", dict), ("sections", list), ("counts", dict)):
        if not isinstance(manifest.get(key), kind):
            raise BundleError(f"manifest.json: {key} is missing or not a JSON {kind.__name__.replace('dict', 'object')}")
    if "meta.json" not in zf.names:
        raise BundleError("bundle has no meta.json")
    meta = parse_json(zf.read("meta.json"), "meta.json")
    if not isinstance(meta, dict) or not isinstance(meta.get("version_hash"), str):
        raise BundleError("meta.json: expected an object with name, description, version_hash, schema_version")
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise BundleError(f"meta.json: unknown schema_version {meta.get('schema_version')!r}; "
                          f"this eval752 reads {SCHEMA_VERSION}")
    return manifest, meta


def check_bundle(path: Path, scratch: Path, limits: Limits) -> CheckedBundle:
    with SafeZip(path, limits) as zf:
        manifest, meta = read_header(zf)
        for name in zf.names:
            problem = layout_problem(name)
            if problem:
                raise BundleError(problem)
        found: dict[str, tuple[str, int]] = {}
        for name in zf.names:
            try:
                found[name] = zf.extract(name, scratch / name)
            except OSError as e:
                raise BundleError(f"entry {name!r} cannot be written: {e.strerror}") from None
    listed = manifest["entries"]
    for name in sorted(found):
        if name == "manifest.json":
            continue
        entry = listed.get(name)
        if not isinstance(entry, dict):
            raise BundleError(f"entry {name!r} is not listed in the manifest")
        digest, size = found[name]
        if entry.get("size") != size:
            raise BundleError(f"entry {name!r} has {size} bytes; the manifest says {entry.get('size')!r}")
        if entry.get("sha256") != digest:
            raise BundleError(f"entry {name!r}: sha256 {digest[:12]}... does not match the manifest")
    missing = sorted(set(listed) - set(found))
    if missing:
        raise BundleError(f"the manifest lists {missing[0]!r}, which is not in the bundle")
    dataset = check_sections(manifest, meta, scratch, found)
    if manifest["kind"] == "run":
        check_run_files(manifest, dataset, scratch, found)
    else:
        extra = sorted(n for n in found if n in RUN_FILES)
        if extra:
            raise BundleError(f"a dataset bundle must not hold {extra[0]!r}")
    return CheckedBundle(root=scratch, manifest=manifest, meta=meta, dataset=dataset, names=sorted(found))


def _lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def check_sections(manifest: dict[str, Any], meta: dict[str, Any], root: Path, found: dict) -> Dataset:
    files = sorted(n for n in found if n.startswith("sections/"))
    if not files:
        raise BundleError("bundle has no sections/*.jsonl")
    declared = {}
    for s in manifest["sections"]:
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not isinstance(s.get("items"), int):
            raise BundleError("manifest.json: each section must be an object with name and items")
        declared[f"sections/{s['name']}.jsonl"] = s
    if sorted(declared) != files:
        raise BundleError(f"manifest.json lists sections {sorted(declared)}, the bundle holds {files}")
    for name in files:
        actual = _lines(root / name)
        if declared[name]["items"] != actual:
            raise BundleError(f"manifest says section {declared[name]['name']!r} has {declared[name]['items']} "
                              f"items; {name} has {actual}")
    try:
        dataset = load_dataset(root)
    except DatasetError as e:
        shown = str(e).replace(str(root) + "/", "")
        raise BundleError(f"the bundle's items are invalid: {shown}") from None
    counts = manifest["counts"]
    if counts.get("items") != len(dataset.items):
        raise BundleError(f"manifest counts {counts.get('items')!r} items; the sections hold {len(dataset.items)}")
    assets = sum(1 for n in found if n.startswith("assets/"))
    if counts.get("assets", assets) != assets:
        raise BundleError(f"manifest counts {counts.get('assets')!r} assets; the bundle holds {assets}")
    if meta["version_hash"] != dataset.version_hash:
        raise BundleError(f"meta.json version_hash {meta['version_hash'][:12]}... does not match the dataset's "
                          f"content ({dataset.version_hash[:12]}...)")
    return dataset


def check_run_files(manifest: dict[str, Any], dataset: Dataset, root: Path, found: dict) -> None:
    for name in RUN_FILES:
        if name not in found:
            raise BundleError(f"run bundle has no {name}")
    for name in ("run_config.json", "run_manifest.json", "summary.json"):
        if not isinstance(parse_json((root / name).read_bytes(), name), dict):
            raise BundleError(f"{name} must hold a JSON object")
    ids = {item.id for item in dataset.items}
    rows = 0
    with open(root / "results.jsonl", "rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = parse_json(line, f"results.jsonl line {n}")
            if not isinstance(row, dict) or row.get("item_id") not in ids:
                raise BundleError(f"results.jsonl line {n}: item_id is not an item of the bundled dataset")
            rows += 1
    if manifest["counts"].get("results") != rows:
        raise BundleError(f"manifest counts {manifest['counts'].get('results')!r} results; results.jsonl has {rows}")
