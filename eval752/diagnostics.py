"""Degeneration report: stream a JSONL results file of any size through the batch kernels.

``scan_results_file`` reads the file line by line, keeps only the fields it needs, and runs the kernels on
chunks of ``chunk_rows`` rows (or ``chunk_bytes`` of input, whichever comes first), so memory does not grow
with the file. For every row it writes one JSON line of flags; it returns a per-group summary.

Works on eval752's own ``results.jsonl`` rows (``response.text``, ``response.reasoning``, prompt in
``request.messages``) and on any JSONL through dotted field paths (``choices.0.message.content``: a number
indexes a list). A missing field or JSON null reads as an empty text.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import InputFormatError
from .kernels import detect_leaks, has_cyrillic, infer_expected, native_scripts, ngram_scan
from .kernels.columnar import blocks, decode_span

_MISSING = object()
NO_GROUP = "(none)"


def get_path(row: Any, path: str) -> Any:
    """``row`` followed along a dotted path; ``_MISSING`` when some step is absent."""
    node = row
    for part in path.split("."):
        if isinstance(node, dict):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


def prompt_text(value: Any) -> str:
    """Text of a prompt field: a string, or chat messages (the user turns' text, parts joined)."""
    if value is _MISSING or value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        turns = [m for m in value if isinstance(m, dict)]
        users = [m for m in turns if m.get("role") == "user"] or turns
        pieces: list[str] = []
        for m in users:
            content = m.get("content")
            if isinstance(content, str):
                pieces.append(content)
            elif isinstance(content, list):
                pieces.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        return "\n".join(pieces)
    return ""


class _Chunk:
    """The few values kept per row until the chunk is scanned."""

    def __init__(self, fields: int) -> None:
        self.lines: list[int] = []
        self.ids: list[Any] = []
        self.samples: list[Any] = []
        self.groups: list[str] = []
        self.texts: list[list[str]] = [[] for _ in range(fields)]
        self.prompts: list[str] = []
        self.bytes = 0


def _group_entry() -> dict[str, Any]:
    return {"rows": 0, "repeat": 0, "leak": 0, "cyrillic": 0}


def _rates(entry: dict[str, Any]) -> dict[str, Any]:
    rows = entry["rows"]
    out = dict(entry)
    for key in ("repeat", "leak", "cyrillic"):
        out[f"{key}_rate"] = entry[key] / rows if rows else 0.0
    return out


def scan_results_file(
    path: str | Path,
    out_path: str | Path,
    *,
    text_fields: Sequence[str] = ("response.text", "response.reasoning"),
    group_field: str | None = "section",
    id_field: str = "item_id",
    prompt_field: str | None = "request.messages",
    n: int = 3,
    threshold: int = 4,
    expected: str | None = None,
    chunk_rows: int = 10000,
    chunk_bytes: int = 32 << 20,
    summary_path: str | Path | None = None,
) -> dict[str, Any]:
    """Scan ``path`` (JSONL) for degenerate repetition, Cyrillic and language leaks; write flags to ``out_path``.

    Each text field is checked on its own; a row repeats / has Cyrillic / leaks when any of its fields does.
    The leak expectation is ``expected`` (language code or script name) for every row, or, when None, is
    inferred per row from ``prompt_field`` (rows without a prompt with letters get no leak check).
    Rows are grouped by ``group_field`` (rows without it fall in ``"(none)"``). The default, "section", suits
    eval752's own rows, which carry no model name (a run directory is one model); pass ``"model"`` or any
    dotted path for merged or foreign files.

    Each output line: ``{"row", "line", "id", ["sample"], "group", "repeat", "repeat_field", "ngram",
    "ngram_count", "cyrillic", "leak", "expected", "foreign_scripts"}`` where ``ngram`` is the first n-gram to
    reach ``threshold`` in the first repeating field (see ``ngram_repeat_details``) and ``ngram_count`` its
    ``str.count``. Returns (and writes to ``summary_path`` if given) ``{"file", "rows", "bytes", "seconds",
    "params", "overall", "groups"}`` with counts and rates per group. A line that is not a JSON object, or a
    text field that is neither a string nor null, raises ``InputFormatError`` naming the file and line.
    """
    path, out_path = Path(path), Path(out_path)
    if chunk_rows < 1 or chunk_bytes < 1:
        raise ValueError("chunk_rows and chunk_bytes must be >= 1")
    if not text_fields:
        raise ValueError("text_fields must name at least one field")
    ngram_scan([], n, threshold)  # fail fast on bad n / threshold, before reading anything
    if expected is not None:
        native_scripts(expected)  # and on an unknown language or script
    started = time.perf_counter()
    groups: dict[str, dict[str, Any]] = {}
    state = {"rows": 0, "bytes": 0}
    fields = list(text_fields)

    def flush(chunk: _Chunk, out) -> None:
        count = len(chunk.lines)
        if not count:
            return
        repeat = np.zeros(count, dtype=bool)
        cyr = np.zeros(count, dtype=bool)
        leak = np.zeros(count, dtype=bool)
        rep_field: list[str | None] = [None] * count
        rep_gram: list[str | None] = [None] * count
        rep_count = [0] * count
        foreign: list[dict[str, int]] = [{} for _ in range(count)]
        if expected is not None:
            per_row: list[str | None] = [expected] * count
        elif prompt_field is not None:
            per_row = infer_expected(chunk.prompts)
        else:
            per_row = [None] * count
        for name, texts in zip(fields, chunk.texts):
            for lo, hi, enc in blocks(texts):  # encode once, run every kernel on the block
                at, cnt = ngram_scan(enc, n, threshold, full_count=True)
                for r in np.flatnonzero((at >= 0) & ~repeat[lo:hi]).tolist():
                    start = int(enc.offsets[r] + at[r])
                    rep_field[lo + r] = name
                    rep_gram[lo + r] = decode_span(enc.codepoints, start, start + n)
                    rep_count[lo + r] = int(cnt[r])
                repeat[lo:hi] |= at >= 0
                cyr[lo:hi] |= has_cyrillic(enc)
                report = detect_leaks(enc, per_row[lo:hi])
                leak[lo:hi] |= report.flags
                for r, found in enumerate(report.foreign):
                    if found:
                        merged = foreign[lo + r]
                        for script, k in found.items():
                            merged[script] = merged.get(script, 0) + k
        lines = []
        for r in range(count):
            rec: dict[str, Any] = {"row": state["rows"] + r, "line": chunk.lines[r], "id": chunk.ids[r]}
            if chunk.samples[r] is not _MISSING:
                rec["sample"] = chunk.samples[r]
            rec.update(
                group=chunk.groups[r], repeat=bool(repeat[r]), repeat_field=rep_field[r], ngram=rep_gram[r],
                ngram_count=rep_count[r], cyrillic=bool(cyr[r]), leak=bool(leak[r]), expected=per_row[r],
                foreign_scripts=foreign[r] if len(foreign[r]) < 2 else dict(
                    sorted(foreign[r].items(), key=lambda kv: (-kv[1], kv[0]))
                ),
            )
            lines.append(json.dumps(rec, ensure_ascii=False))
            entry = groups.setdefault(chunk.groups[r], _group_entry())
            entry["rows"] += 1
            entry["repeat"] += int(repeat[r])
            entry["leak"] += int(leak[r])
            entry["cyrillic"] += int(cyr[r])
        out.write("\n".join(lines) + "\n")
        state["rows"] += count

    def field_text(row: dict, name: str, lineno: int) -> str:
        value = get_path(row, name)
        if value is _MISSING or value is None:
            return ""
        if not isinstance(value, str):
            raise InputFormatError(f"{path}:{lineno}: field {name!r} is {type(value).__name__}, expected a string")
        return value

    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "rb") as src, open(out_path, "w", encoding="utf-8") as out:
        chunk = _Chunk(len(fields))
        for lineno, raw in enumerate(src, 1):
            state["bytes"] += len(raw)
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputFormatError(f"{path}:{lineno}: not valid JSON: {exc}") from None
            if not isinstance(row, dict):
                raise InputFormatError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            chunk.lines.append(lineno)
            ident = get_path(row, id_field)
            chunk.ids.append(None if ident is _MISSING else ident)
            chunk.samples.append(row.get("sample", _MISSING))
            group = get_path(row, group_field) if group_field else _MISSING
            chunk.groups.append(NO_GROUP if group is _MISSING or group is None else str(group))
            for k, name in enumerate(fields):
                chunk.texts[k].append(field_text(row, name, lineno))
            if expected is None and prompt_field is not None:
                chunk.prompts.append(prompt_text(get_path(row, prompt_field)))
            chunk.bytes += len(raw)
            if len(chunk.lines) >= chunk_rows or chunk.bytes >= chunk_bytes:
                flush(chunk, out)
                chunk = _Chunk(len(fields))
        flush(chunk, out)

    overall = _group_entry()
    for entry in groups.values():
        for key in overall:
            overall[key] += entry[key]
    summary = {
        "file": str(path),
        "rows": state["rows"],
        "bytes": state["bytes"],
        "seconds": round(time.perf_counter() - started, 3),
        "params": {"text_fields": fields, "group_field": group_field, "n": n, "threshold": threshold,
                   "expected": expected, "prompt_field": prompt_field},
        "overall": _rates(overall),
        "groups": {g: _rates(e) for g, e in groups.items()},
    }
    if summary_path is not None:
        Path(summary_path).write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return summary
