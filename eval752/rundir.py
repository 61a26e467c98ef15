"""The run directory on disk: ``results.jsonl`` written so that a kill at any moment loses nothing that
was reported done, and the small JSON files beside it written atomically.

Each row is one ``write`` of a whole line followed by a flush, so after a SIGKILL the file holds every
completed row and at worst one partial last line; ``load_results`` cuts that line off (and says so) and
keeps the first successful row per (item, sample). The file is fsynced every second and at the end, so a
power loss costs at most the last second.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
MANIFEST = "manifest.json"


def write_json_atomic(path: Path, value: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=2, sort_keys=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class ResultsWriter:
    def __init__(self, path: Path, fsync_interval: float = 1.0) -> None:
        self.path = path
        self._f = open(path, "a", encoding="utf-8")
        self._interval = fsync_interval
        self._last_sync = time.monotonic()

    def write(self, row: dict[str, Any]) -> None:
        self._f.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._f.flush()
        now = time.monotonic()
        if now - self._last_sync >= self._interval:
            os.fsync(self._f.fileno())
            self._last_sync = now

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()


def load_results(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of an existing results file and notes on what was repaired.

    A partial last line (the process died mid-write) is cut off. A line that is not JSON elsewhere is a
    corrupt file, not a crash artefact: it is an error, never silently dropped.
    """
    notes: list[str] = []
    if not path.exists():
        return [], notes
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        notes.append(f"{path}: removed a partial last line ({len(data) - cut} bytes) left by an interrupted write")
        with open(path, "r+b") as f:
            f.truncate(cut)
            f.flush()
            os.fsync(f.fileno())
        data = data[:cut]
    rows = []
    for n, line in enumerate(data.decode("utf-8", errors="strict").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            from .errors import InputFormatError

            raise InputFormatError(f"{path}:{n}: -: not a JSON result row ({e.msg}); the file is corrupt") from None
        rows.append(row)
    return rows, notes


def keep_completed(rows: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The first successful row per (item, sample); the number of failed or duplicate rows dropped."""
    seen: set[tuple[str, int]] = set()
    kept, dropped = [], 0
    for row in rows:
        key = (row.get("item_id"), row.get("sample"))
        if row.get("status") != "ok" or key in seen:
            dropped += 1
            continue
        seen.add(key)
        kept.append(row)
    return kept, dropped


def rewrite_results(path: Path, rows: list[dict[str, Any]]) -> None:
    """Replace the results file with ``rows`` in one atomic rename."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
