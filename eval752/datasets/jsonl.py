"""A careful JSON Lines reader: bounded memory, one problem per bad line, never a crash.

``iter_jsonl`` yields ``(line_no, value)`` for every non-blank line, where ``value`` is either the parsed
JSON value or a ``LineProblem`` saying why the line could not be read. It refuses, each with a clear
message and without stopping at the first one:

* a UTF-8 byte-order mark at the start of the file (reported, then ignored so later lines are still read);
* a line longer than ``max_line_bytes`` (read in bounded chunks and skipped up to the next newline, so a
  huge line never sits in memory whole);
* bytes that are not UTF-8 (naming the byte offset in the file, counted in decompressed bytes for ``.gz``);
* invalid JSON (the parser's message and 1-based column);
* ``NaN``, ``Infinity`` and ``-Infinity``, which Python accepts but JSON does not;
* an object with the same key twice (JSON parsers disagree on which value wins);
* nesting deeper than ``max_depth`` (checked before parsing, so 100,000 ``[`` give a problem, not a
  ``RecursionError``).

Files whose name ends in ``.gz`` are decompressed on the fly.
"""
from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator

DEFAULT_MAX_LINE_BYTES = 10_000_000
DEFAULT_MAX_DEPTH = 64
BOM = b"\xef\xbb\xbf"
BOM_MESSAGE = "file starts with a UTF-8 byte-order mark; save it without one"
_CHUNK = 1 << 20
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


@dataclass(frozen=True)
class LineProblem:
    """Why one line (or, with ``field``, one field of it) is wrong."""

    message: str
    field: str = "-"

    def format(self, file: str, line: int | str) -> str:
        return f"{file}:{line}: {self.field}: {self.message}"


class _Refused(ValueError):
    """Raised from inside the JSON parser's hooks to reject a value it would otherwise accept."""


def _reject_constant(name: str) -> Any:
    raise _Refused(f"invalid JSON: {name} is not allowed (write null or a number)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"invalid JSON: key {key!r} appears twice in one object")
            seen.add(key)
    return out


def nesting_depth_exceeds(text: str, max_depth: int) -> bool:
    """True when arrays/objects in ``text`` nest deeper than ``max_depth`` (brackets in strings ignored)."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub("", text) if '"' in text else text):
        if match.group() in "[{":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def parse_json_line(text: str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse one line; return the value or a ``LineProblem``."""
    if nesting_depth_exceeds(text, max_depth):
        return LineProblem(f"nesting deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except _Refused as exc:
        return LineProblem(str(exc))
    except json.JSONDecodeError as exc:
        return LineProblem(f"invalid JSON: {exc.msg} (column {exc.colno})")
    except RecursionError:
        return LineProblem(f"nesting deeper than {max_depth} levels")


def open_binary(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")


def raw_lines(stream: IO[bytes], max_line_bytes: int) -> Iterator[tuple[int, int, bytes | None]]:
    """Yield ``(line_no, byte_offset, raw)`` per line; ``raw`` is None when the line is too long.

    At most ``max_line_bytes`` plus one chunk is held in memory, whatever the file holds.
    """
    buf = bytearray()
    too_long = False
    line_no = 0
    line_start = 0  # byte offset of the current line in the (decompressed) stream
    pos = 0  # byte offset of the current chunk
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl == -1 else nl
            if not too_long:
                if len(buf) + (end - start) > max_line_bytes:
                    too_long = True
                    buf.clear()
                else:
                    buf += chunk[start:end]
            if nl == -1:
                break
            line_no += 1
            yield line_no, line_start, None if too_long else bytes(buf)
            buf.clear()
            too_long = False
            start = nl + 1
            line_start = pos + start
        pos += len(chunk)
    if buf or too_long:
        yield line_no + 1, line_start, None if too_long else bytes(buf)


def iter_jsonl(
    path: str | Path,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_no, parsed value | LineProblem)`` for each non-blank line of a JSONL(.gz) file.

    A byte-order mark is reported as ``(1, LineProblem)`` before line 1's own value.
    """
    path = Path(path)
    with open_binary(path) as stream:
        for line_no, offset, raw in raw_lines(stream, max_line_bytes):
            if raw is None:
                yield line_no, LineProblem(f"line is longer than {max_line_bytes} bytes; skipped")
                continue
            if line_no == 1 and raw.startswith(BOM):
                yield line_no, LineProblem(BOM_MESSAGE)
                raw = raw[len(BOM):]
                offset += len(BOM)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = raw[exc.start]
                yield line_no, LineProblem(
                    f"invalid UTF-8: byte 0x{bad:02x} at byte offset {offset + exc.start} of the file"
                )
                continue
            yield line_no, parse_json_line(text, max_depth=max_depth)


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
