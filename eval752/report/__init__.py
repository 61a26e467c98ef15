"""Reports: a run's self-contained ``report.html`` and the ``eval752-report`` leaderboard and comparisons.
Nothing here is imported on a run's hot path; matplotlib is imported only while a report is written."""
from __future__ import annotations

import sys
from pathlib import Path


def write_run_report(run_dir: Path | str) -> Path | None:
    """Write ``report.html`` into a run directory; a failure is a warning, never a failed run."""
    try:
        from .run_report import write_run_report as write

        return write(run_dir)
    except Exception as exc:  # noqa: BLE001 - the run's results matter more than its report
        print(f"eval752: warning: report.html not written: {exc!r}", file=sys.stderr)
        return None
