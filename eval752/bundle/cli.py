"""``eval752-bundle export|import|inspect|verify``: the command line for ``.eval752.zip`` bundles."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import Eval752Error
from .zipio import Limits

PROG = "eval752-bundle"


def _limits(args: argparse.Namespace) -> Limits:
    return Limits(max_entries=args.max_entries, max_entry_bytes=args.max_entry_bytes,
                  max_total_bytes=args.max_total_bytes)


def _add_limits(p: argparse.ArgumentParser) -> None:
    d = Limits()
    p.add_argument("--max-entries", type=int, default=d.max_entries, help="most entries a bundle may hold")
    p.add_argument("--max-entry-bytes", type=int, default=d.max_entry_bytes,
                   help="most bytes one entry may decompress to")
    p.add_argument("--max-total-bytes", type=int, default=d.max_total_bytes,
                   help="most bytes all entries together may decompress to")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description="Export, import, inspect and verify .eval752.zip bundles.")
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="bundle a dataset (file or folder) or a run directory")
    ex.add_argument("source", help="a dataset file/folder, or a run directory (has .hydra/config.yaml)")
    ex.add_argument("-o", "--output", required=True, help="the bundle to write (name.eval752.zip)")
    ex.add_argument("--sections", help="comma-separated sections to export (datasets only)")
    ex.add_argument("--description", default="", help="meta.json description")
    ex.add_argument("--format", default="auto", help="dataset format: auto, native, mmlu, gsm8k, humaneval")
    ex.add_argument("--checker", action="append", default=[], type=Path,
                    help="a custom checker .py file to include under checkers/ (repeatable)")
    im = sub.add_parser("import", help="unpack a bundle into a new folder (dataset folder or run directory)")
    im.add_argument("bundle")
    im.add_argument("target", help="the folder to create (must not exist or be empty)")
    im.add_argument("--trust-checkers", action="store_true",
                    help="also write the bundle's checkers/*.py (code) into the target")
    _add_limits(im)
    ins = sub.add_parser("inspect", help="print what a bundle holds")
    ins.add_argument("bundle")
    _add_limits(ins)
    ve = sub.add_parser("verify", help="check every hash, count and item of a bundle")
    ve.add_argument("bundle")
    _add_limits(ve)
    return ap


def run(args: argparse.Namespace) -> None:
    from . import export_dataset, export_run, import_bundle, inspect_lines, verify_bundle

    if args.command == "export":
        src, out = Path(args.source), Path(args.output)
        if (src / ".hydra" / "config.yaml").is_file():
            if args.sections:
                raise Eval752Error("--sections applies to datasets; a run is exported with its whole dataset")
            info = export_run(src, out, description=args.description, checkers=args.checker)
        else:
            sections = [s for s in args.sections.split(",") if s] if args.sections else None
            info = export_dataset(src, out, sections=sections, description=args.description,
                                  checkers=args.checker, fmt=args.format)
        extra = f", {info['results']} results" if "results" in info else ""
        print(f"exported {info['kind']} bundle: {info['items']} items{extra}, version {info['version_hash']}")
        print(out)
    elif args.command == "import":
        info = import_bundle(Path(args.bundle), Path(args.target), _limits(args), trust_checkers=args.trust_checkers)
        print(f"imported {info['kind']} bundle: {info['items']} items")
        if info["checkers"] and not info["checkers_written"]:
            print(f"{PROG}: note: the bundle holds {len(info['checkers'])} custom checker file(s) "
                  f"({', '.join(info['checkers'])}); not written (code: pass --trust-checkers to accept them)",
                  file=sys.stderr)
        print(info["target"])
    elif args.command == "inspect":
        print("\n".join(inspect_lines(Path(args.bundle), _limits(args))))
    else:
        checked = verify_bundle(Path(args.bundle), _limits(args))
        print(f"ok: {checked.kind} bundle, {len(checked.dataset.items)} items in {len(checked.dataset.sections)} "
              f"sections, {len(checked.names)} entries, hashes and counts match, version {checked.dataset.version_hash}")


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        run(args)
    except Eval752Error as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except (OSError, ValueError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
