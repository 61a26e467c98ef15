"""``eval752-import``: build a native dataset folder from a Hugging Face dataset or a local parquet, CSV,
JSON or JSONL file, through the ``datasets`` library and a column mapping (``eval752/datasets/hf.py``).

The Hub is used only with ``--allow-hub``; otherwise ``datasets`` runs offline (``HF_HUB_OFFLINE=1``) and a
name that is not a local file is refused. Local files are read with a throw-away cache folder.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from .errors import ConfigError, Eval752Error

PROG = "eval752-import"
BUILDERS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".gz": "json"}


def mapping_dir() -> Path:
    from .cli import config_dirs

    return config_dirs()[0] / "mapping"


def load_mapping_file(name: str) -> tuple[dict[str, Any], str]:
    import yaml

    path = Path(name)
    if not path.is_file():
        path = mapping_dir() / f"{name}.yaml"
    if not path.is_file():
        from .registry import unknown_name_message

        choices = sorted(p.stem for p in mapping_dir().glob("*.yaml"))
        raise ConfigError(unknown_name_message("mapping", name, choices) + " (or give a YAML file)")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a mapping is a YAML object of keys")
    return data, str(path)


def build_mapping(args: argparse.Namespace):
    from .datasets.hf import Mapping

    data, source = load_mapping_file(args.mapping) if args.mapping else ({}, "command line")
    flags = {"prompt": args.prompt, "answer": args.answer, "type": args.type, "id": args.id,
             "answer_format": args.answer_format, "section": args.section, "section_column": args.section_column,
             "checker": args.checker, "image": args.image, "name": args.name}
    data.update({k: v for k, v in flags.items() if v is not None})
    if args.choices:
        cols = [c for c in args.choices.split(",") if c]
        data["choices"] = cols[0] if len(cols) == 1 else cols
    for key in ("criteria", "meta"):
        if getattr(args, key):
            data[key] = [c for c in getattr(args, key).split(",") if c]
    return Mapping.from_dict(data, source)


def load_source(source: str, split: str, config: str | None, allow_hub: bool, cache_dir: str):
    """A ``datasets.Dataset`` for a local file or (with ``allow_hub``) a hub id, and a default section."""
    if not allow_hub:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
    try:
        import datasets
    except ImportError:
        raise ConfigError("eval752-import needs the datasets library: pip install 'eval752[hf]'") from None
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    path = Path(source)
    try:
        if path.is_file():
            suffix = ".gz" if path.name.endswith(".gz") else path.suffix.lower()
            builder = BUILDERS.get(suffix)
            if builder is None:
                raise ConfigError(f"{source}: cannot tell the file type; use .parquet, .csv, .json or .jsonl")
            from .datasets.loader import stem_of

            ds = datasets.load_dataset(builder, data_files=str(path), split=split, cache_dir=cache_dir)
            return ds, stem_of(path)
        if path.exists() or not allow_hub:
            raise ConfigError(f"{source!r} is not a local file; to download it from the Hugging Face Hub "
                              "pass --allow-hub")
        ds = datasets.load_dataset(source, config, split=split)
        return ds, split.split("[")[0]
    except Eval752Error:
        raise
    except (ValueError, KeyError, FileNotFoundError, OSError) as e:
        raise ConfigError(f"cannot load {source} (split {split!r}): {e}") from None


def undecoded(ds, column: str | None):
    """Image columns are read as raw bytes (no Pillow needed to import PNGs)."""
    if not column or column not in ds.column_names:
        return ds
    import datasets

    if isinstance(ds.features[column], datasets.Image):
        return ds.cast_column(column, datasets.Image(decode=False))
    return ds


def run(args: argparse.Namespace) -> int:
    from .datasets import load_dataset, make_dataset, write_dataset
    from .datasets.hf import check_columns, map_row

    mapping = build_mapping(args)
    with tempfile.TemporaryDirectory(prefix="eval752-import-") as tmp:
        ds, default_section = load_source(args.source, args.split, args.config, args.allow_hub, str(Path(tmp) / "hf"))
        check_columns(mapping, list(ds.column_names))
        ds = undecoded(ds, mapping.image)
        name = mapping.name or Path(args.source).name.split(".")[0].split("/")[-1] or "dataset"
        warnings: list[str] = []
        assets = Path(tmp) / "staging"

        def save_image(rel: str, data: bytes) -> str:
            target = assets / "assets" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            return rel

        if args.preview:
            print("features:")
            for col, feature in ds.features.items():
                print(f"  {col}: {feature}")
            print(f"rows: {len(ds)}")
            for n in range(min(args.preview_rows, len(ds))):
                item = map_row(mapping, ds[n], n + 1, name, default_section, None, warnings)
                print(json.dumps(item.to_json() if item else None, ensure_ascii=False)[:2000])
            for w in warnings:
                print(f"{PROG}: warning: {w}", file=sys.stderr)
            return 0
        if not args.output:
            raise ConfigError("give --output <folder> (or --preview to look first)")
        items = []
        for n, row in enumerate(ds, 1):
            item = map_row(mapping, row, n, name, default_section, save_image, warnings)
            if item is not None:
                items.append(item)
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                raise ConfigError(f"id {item.id!r} appears more than once; map a unique id column (--id)")
            seen.add(item.id)
        if not items:
            raise ConfigError(f"no usable rows in {args.source} ({len(warnings)} skipped)")
        dataset = make_dataset(name, assets, items)
        try:
            write_dataset(dataset, Path(args.output))
        except (FileExistsError, ValueError) as e:
            raise ConfigError(str(e)) from None
    for w in warnings[:50]:
        print(f"{PROG}: warning: {w}", file=sys.stderr)
    if len(warnings) > 50:
        print(f"{PROG}: warning: ... and {len(warnings) - 50} more", file=sys.stderr)
    loaded = load_dataset(args.output)
    print(f"imported {len(loaded.items)} items in {len(loaded.sections)} sections from {len(ds)} rows "
          f"({len(warnings)} skipped), version {loaded.version_hash}")
    print(args.output)
    return 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description="Import a Hugging Face dataset or a local "
                                 "parquet/CSV/JSON(L) file as a native eval752 dataset folder.")
    ap.add_argument("source", help="a local .parquet/.csv/.json/.jsonl file, or a hub id (with --allow-hub)")
    ap.add_argument("-o", "--output", help="the dataset folder to write (new or empty)")
    ap.add_argument("--mapping", help="a mapping in conf/mapping/ (mmlu, gsm8k, humaneval) or a YAML file")
    ap.add_argument("--split", default="train", help="split, with slicing: train[:50] (local files: train)")
    ap.add_argument("--config", help="hub dataset configuration name")
    ap.add_argument("--allow-hub", action="store_true", help="allow downloading from the Hugging Face Hub")
    ap.add_argument("--preview", action="store_true", help="print features, mapped rows and the row count; "
                    "write nothing")
    ap.add_argument("--preview-rows", type=int, default=3)
    for flag in ("prompt", "answer", "type", "id", "section", "checker", "image", "name"):
        ap.add_argument(f"--{flag}")
    ap.add_argument("--answer-format", choices=("text", "letter", "index", "final_number"))
    ap.add_argument("--section-column")
    ap.add_argument("--choices", help="a list column, or comma-separated columns: A,B,C,D")
    ap.add_argument("--criteria", help="comma-separated criteria columns")
    ap.add_argument("--meta", help="comma-separated columns copied into meta")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        sys.exit(run(args))
    except Eval752Error as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
