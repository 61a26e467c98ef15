"""``eval752-report <run or sweep dirs...> [--out DIR] [--metric NAME]``: a leaderboard of the runs (Markdown,
CSV, HTML), paired significance between runs of the same dataset, per-item differences, a bar chart of up to
10 runs, and the vendor table of verifier runs. Prints a short table and the report's path."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def default_out(paths: list[Path]) -> Path:
    if len(paths) == 1 and (paths[0] / "sweep.json").is_file():
        return paths[0] / "report"
    return Path("outputs") / "reports" / time.strftime("%Y%m%d-%H%M%S")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="eval752-report", description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", help="run directories or sweep directories")
    p.add_argument("--out", help="output folder (default: <sweep>/report for one sweep, else outputs/reports/<time>)")
    p.add_argument("--metric", help="the metric to rank by (default: score, or the first metric)")
    args = p.parse_args(argv)
    from .leaderboard import write_all
    from .load import expand_dirs, load_run

    paths = [Path(d) for d in args.dirs]
    missing = [str(d) for d in paths if not d.is_dir()]
    if missing:
        print(f"eval752-report: error: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    run_dirs = expand_dirs(paths)
    if not run_dirs:
        print("eval752-report: error: no run directories (summary.json) found in the given folders", file=sys.stderr)
        return 2
    runs = [load_run(d) for d in run_dirs]
    res = write_all(runs, Path(args.out) if args.out else default_out(paths), args.metric)
    metric = res["metric"]
    width = min(70, max(len(str(row[1])) for row in res["rows"]) + 2)
    print(f"{'rank':>4}  {'run':<{width}}{metric:>10}{'num':>7}")
    for row in res["rows"]:
        value = next((v for h, v in zip(res["headers"], row) if h == metric), None)
        v = "-" if not isinstance(value, (int, float)) else f"{value:.4f}"
        print(f"{row[0]:>4}  {str(row[1])[:width - 2]:<{width}}{v:>10}{str(row[6] or ''):>7}")
    for c in res["comparisons"][:3]:
        if c.get("p_value") is not None:
            print(f"{c['a'][:30]} vs {c['b'][:30]}: diff {c['diff']:+.4f} "
                  f"[{c['ci95'][0]:+.4f}, {c['ci95'][1]:+.4f}], p={c['p_value']:.3g} ({c['test']})")
    print(f"report: {res['out'] / 'report.html'}")
    return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
