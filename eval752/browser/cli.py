"""``eval752-browser pack|script|import``: evaluate a chat web page with eval752's datasets and checkers.

    eval752-browser pack data/geo --sections capitals --max-items 20 -o geo.pack.json
    eval752-browser script geo.pack.json --preset chatgpt -o geo.js          # paste into the page's console
    eval752-browser import eval752-capture.json --dataset data/geo            # a completed run directory
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import ConfigError, Eval752Error

PROG = "eval752-browser"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description="Prompt packs, browser scripts and capture import.")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="a prompt-only pack (no answers, checkers or assets), signed with the local secret")
    p.add_argument("dataset", help="a dataset file or folder")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--sections", help="comma-separated sections")
    p.add_argument("--max-items", type=int, help="at most this many items (the first ones)")
    p.add_argument("--format", default="auto")
    p.add_argument("--system-prompt")
    s = sub.add_parser("script", help="the JavaScript to run in the chat page")
    s.add_argument("pack")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--preset", default="custom", help="chatgpt, gemini or custom")
    s.add_argument("--selectors", help="YAML file with origin, input, send, response, busy")
    for key in ("origin", "input", "send", "response", "busy"):
        s.add_argument(f"--{key}")
    s.add_argument("--stable-ms", type=int, default=1500, help="an answer is finished when unchanged this long")
    s.add_argument("--timeout-ms", type=int, default=180_000)
    s.add_argument("--between-ms", type=int, default=500)
    s.add_argument("--filename", default="eval752-capture.json")
    s.add_argument("--bookmarklet", action="store_true", help="write a javascript: URL instead")
    i = sub.add_parser("import", help="a capture -> a completed, scored run directory")
    i.add_argument("capture")
    i.add_argument("--dataset", required=True, help="the dataset the pack was made from")
    i.add_argument("--run-dir", help="the run directory to create (default outputs/runs/<stamp>_<name>)")
    i.add_argument("--output-root", default="outputs")
    i.add_argument("--checker", help="force one checker for every item")
    return ap


def _read_json(path: str) -> object:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: cannot read ({e})") from None


def run(args: argparse.Namespace) -> None:
    from .pack import make_pack, verify_pack
    from .script import bookmarklet, make_script, resolve_target

    if args.command == "pack":
        sections = [x for x in args.sections.split(",") if x] if args.sections else None
        pack = make_pack(args.dataset, sections=sections, max_items=args.max_items, fmt=args.format,
                         system_prompt=args.system_prompt)
        Path(args.output).write_text(json.dumps(pack, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"pack: {len(pack['items'])} prompts from {pack['dataset']['name']} "
              f"(version {pack['dataset']['version_hash'][:12]}); no answers, checkers or assets")
        print(args.output)
    elif args.command == "script":
        pack = verify_pack(_read_json(args.pack))
        overrides = {}
        if args.selectors:
            import yaml

            loaded = yaml.safe_load(Path(args.selectors).read_text(encoding="utf-8")) or {}
            if not isinstance(loaded, dict):
                raise ConfigError(f"{args.selectors}: expected keys origin, input, send, response, busy")
            overrides.update(loaded)
        overrides.update({k: getattr(args, k) for k in ("origin", "input", "send", "response", "busy")
                          if getattr(args, k) is not None})
        target = resolve_target(args.preset, overrides)
        script = make_script(pack, target, stable_ms=args.stable_ms, timeout_ms=args.timeout_ms,
                             between_ms=args.between_ms, filename=args.filename)
        Path(args.output).write_text(bookmarklet(script) if args.bookmarklet else script, encoding="utf-8")
        print(f"script for {target['origin']} ({args.preset}): {len(pack['items'])} prompts")
        print(args.output)
    else:
        from .capture import import_capture

        run_dir = import_capture(Path(args.capture), Path(args.dataset), Path(args.run_dir) if args.run_dir else None,
                                 output_root=args.output_root, checker=args.checker)
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        score = summary["metrics"]["score"]
        print(f"imported capture: {summary['counts']['rows']} rows, {summary['counts']['failed']} failed, "
              f"score {score['value']:.4f} (num {score['num']})")
        print(run_dir)


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        run(args)
    except Eval752Error as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
