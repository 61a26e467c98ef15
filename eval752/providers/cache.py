"""A response cache in SQLite: an identical request (same endpoint identity, messages, parameters and
sample index) is answered from disk.

SQLite in WAL mode survives a killed process (a transaction is either in the file or not) and lets
several processes share one cache file; writes go through one short transaction each, retried while
another process holds the lock. Only successful responses are stored, so a failure is always retried.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def default_cache_dir() -> Path:
    env = os.environ.get("EVAL752_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "eval752"


class ResponseCache:
    def __init__(self, path: str | Path | None = None) -> None:
        p = Path(path) if path else default_cache_dir() / "responses.sqlite"
        if p.suffix == "" and (p.is_dir() or not p.exists()):
            p = p / "responses.sqlite"
        p.parent.mkdir(parents=True, exist_ok=True)
        self.path = p
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(p), timeout=30.0, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Two processes opening a new cache file at once: switching it to WAL can fail with "database is
        # locked" without waiting on the busy timeout, so setting up is retried like a write.
        for attempt in range(50):
            try:
                if self._db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(SCHEMA)
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or attempt == 49:
                    raise
                time.sleep(0.02 * (attempt + 1))

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT body FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except json.JSONDecodeError:
            return None

    def put(self, key: str, body: dict[str, Any]) -> None:
        text = json.dumps(body, ensure_ascii=False)
        for attempt in range(20):
            try:
                with self._lock:
                    self._db.execute(
                        "INSERT OR REPLACE INTO responses (key, body, created) VALUES (?, ?, ?)",
                        (key, text, time.time()),
                    )
                return
            except sqlite3.OperationalError as e:  # database is locked by another process
                if "locked" not in str(e) or attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
