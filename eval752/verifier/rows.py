"""Input parsing for the vendor verifier: prompt rows and recorded upstream result rows.

A prompt row is one line of a MiniMax-Provider-Verifier ``sample.jsonl`` (or evalscope's
``MiniMaxVendorVerifier`` ``test.jsonl``): a chat-completions request body plus label fields that are
stripped before sending (``check_type``, ``expected_tool_call``, ``scenario_check``). evalscope's copy
stores complex fields as JSON-encoded strings and uses ``''`` for "absent"; both spellings are decoded.

A recorded result row is one line of an upstream ``*_results.jsonl``: ``data_index`` (the 1-based line
number in the prompt file), ``request``, ``response``, ``status``, ``finish_reason`` and validator fields.
Baselines may be trimmed to per-row fields (no ``request`` / ``response``).
"""
from __future__ import annotations

import copy
import json
import logging
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import InputFormatError

log = logging.getLogger(__name__)

CHECK_TOOL_CALLS = "tool_calls"
CHECK_LANGUAGE = "contains_russian_characters_unicode"
CHECK_REPEAT = "repeat_n_gram"
CHECK_SCENARIO = "scenario_check"
KNOWN_CHECKS = (CHECK_TOOL_CALLS, CHECK_LANGUAGE, CHECK_REPEAT, CHECK_SCENARIO)

LABEL_FIELDS = ("check_type", "expected_tool_call", "scenario_check", "data_index")
_MAX_PROBLEMS_SHOWN = 50


@dataclass(frozen=True)
class PromptRow:
    """One prompt line: the request body (labels removed, not yet cleaned) and its labels."""

    data_index: int
    body: Mapping[str, Any]
    check_types: tuple[str, ...] = ()
    expected_tool_call: bool | None = None
    scenario_check: Any = None
    source: str = ""  # "file:line", for messages

    @property
    def tools(self) -> list[Any]:
        return list(self.body.get("tools") or [])

    def validators(self) -> tuple[str, ...]:
        """The validators this row runs: its known ``check_type`` entries, or ``tool_calls`` when none."""
        if not self.check_types:
            return (CHECK_TOOL_CALLS,)
        return tuple(c for c in self.check_types if c in KNOWN_CHECKS)


def _raise(problems: list[str]) -> None:
    shown = problems[:_MAX_PROBLEMS_SHOWN]
    more = len(problems) - len(shown)
    text = "\n".join(shown) + (f"\n... and {more} more problems" if more > 0 else "")
    raise InputFormatError(text)


def decode_field(value: Any) -> Any:
    """``''`` and ``None`` mean absent (``None``); a JSON-encoded string is decoded; anything else is kept."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return json.loads(value)
    return value


def parse_prompt_row(raw: Mapping[str, Any], data_index: int, source: str = "", *,
                     strict_checks: bool = False) -> PromptRow:
    """Validate and decode one prompt object. Raises ``ValueError("field: what")`` on a bad field.
    An unknown ``check_type`` name is an error with ``strict_checks`` (prompt files), else a warning."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"(line): expected a JSON object, got {type(raw).__name__}")
    body = {k: v for k, v in raw.items() if k not in LABEL_FIELDS}
    for name in ("messages", "tools"):
        try:
            value = decode_field(body.get(name))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: not valid JSON in an encoded string ({exc.msg})") from None
        if value is None:
            body.pop(name, None)
        else:
            body[name] = value
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: required, a non-empty list of message objects")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str):
            raise ValueError(f"messages[{i}]: a message object with a string 'role' is required")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise ValueError("tools: must be a list of tool objects")
        for i, t in enumerate(tools):
            fn = t.get("function") if isinstance(t, Mapping) else None
            if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
                raise ValueError(f"tools[{i}]: a tool needs 'function' with a string 'name'")
    try:
        raw_checks = raw.get("check_type")
        checks = [raw_checks] if raw_checks in KNOWN_CHECKS else decode_field(raw_checks)
    except json.JSONDecodeError as exc:
        raise ValueError(f"check_type: not valid JSON in an encoded string ({exc.msg})") from None
    if checks is None:
        checks = []
    if isinstance(checks, str):  # a bare name, e.g. '"tool_calls"' decoded to a string
        checks = [checks]
    if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
        raise ValueError("check_type: must be a list of check names")
    for c in checks:
        if c not in KNOWN_CHECKS and strict_checks:
            from ..registry import unknown_name_message

            raise ValueError(f"check_type: {unknown_name_message('check', c, list(KNOWN_CHECKS))}")
        if c not in KNOWN_CHECKS:
            log.warning("%s: check_type: unknown check %r is ignored (known: %s)", source, c, ", ".join(KNOWN_CHECKS))
    expected = raw.get("expected_tool_call")
    if isinstance(expected, str):
        try:
            expected = decode_field(expected)
        except json.JSONDecodeError:
            raise ValueError(f"expected_tool_call: must be true, false or absent, not {expected!r}") from None
    if expected is not None and not isinstance(expected, bool):
        raise ValueError(f"expected_tool_call: must be true, false or absent, not {expected!r}")
    try:
        scenario = decode_field(raw.get("scenario_check"))
    except json.JSONDecodeError:
        scenario = raw.get("scenario_check")  # free text is kept as it is
    return PromptRow(
        data_index=data_index,
        body=body,
        check_types=tuple(checks),
        expected_tool_call=expected,
        scenario_check=scenario,
        source=source,
    )


def _iter_json_lines(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, decoded value or None, error or None) for each non-blank line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line), None
            except json.JSONDecodeError as exc:
                yield lineno, None, f"(line): not valid JSON ({exc.msg} at column {exc.colno})"


def load_prompt_rows(path: str | Path) -> list[PromptRow]:
    """Read a prompt JSONL file. ``data_index`` is the 1-based physical line number, as upstream numbers
    lines (blank lines keep their number). Every malformed line is reported in one InputFormatError."""
    path = Path(path)
    rows: list[PromptRow] = []
    problems: list[str] = []
    for lineno, value, error in _iter_json_lines(path):
        where = f"{path}:{lineno}"
        if error:
            problems.append(f"{where}: {error}")
            continue
        try:
            rows.append(parse_prompt_row(value, lineno, where, strict_checks=True))
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    if problems:
        _raise(problems)
    return rows


def _uniquify_tool_call_ids(messages: list[dict[str, Any]]) -> None:
    """Give repeated assistant tool-call ids of the form ``name:n`` the next free ``n`` and rewrite the
    matching tool messages (first unconsumed rewrite first), as upstream does for providers that dedupe ids."""

    def split(tid: Any) -> tuple[str, int]:
        if not isinstance(tid, str):
            return "", 0
        head, sep, tail = tid.rpartition(":")
        if sep:
            try:
                return head, int(tail)
            except ValueError:
                return tid, 0
        return tid, 0

    next_free: dict[str, int] = {}
    renamed: dict[str, dict[str, deque[str]]] = defaultdict(lambda: defaultdict(deque))
    for msg in messages:
        if msg.get("role") == "assistant" and isinstance(msg.get("tool_calls"), list):
            for call in msg["tool_calls"]:
                if not isinstance(call, dict) or call.get("id") is None:
                    continue
                old = call["id"]
                name, n = split(old)
                free = next_free.get(name, 0)
                if n >= free:
                    next_free[name] = n + 1
                    new = old
                else:
                    new = f"{name}:{free}"
                    next_free[name] = free + 1
                    call["id"] = new
                renamed[name][old].append(new)
        elif msg.get("role") == "tool" and msg.get("tool_call_id") is not None:
            old = msg["tool_call_id"]
            queue = renamed[split(old)[0]].get(old)
            if queue:
                msg["tool_call_id"] = queue.popleft()


def _normalise_message_reasoning(msg: dict[str, Any]) -> None:
    """History messages carry reasoning as ``reasoning_detail`` (list of {text}), ``reasoning`` or ``reason``;
    the request sends it as ``reasoning_content`` (first present source wins, in that order)."""
    if not any(k in msg for k in ("reasoning_detail", "reasoning", "reason")):
        return
    detail = msg.pop("reasoning_detail", None)
    text = msg.pop("reasoning", None)
    reason = msg.pop("reason", None)
    if detail and isinstance(detail, list):
        parts = [p.get("text") for p in detail if isinstance(p, Mapping) and p.get("text")]
        if parts:
            msg["reasoning_content"] = "\n".join(parts)
    elif text:
        msg["reasoning_content"] = text
    elif reason:
        msg["reasoning_content"] = reason


def prompt_row_to_request(row: PromptRow | Mapping[str, Any], model: str | None = None) -> dict[str, Any]:
    """The clean request body: labels stripped, role ``_input`` sent as ``system``, history reasoning fields
    sent as ``reasoning_content``, repeated tool-call ids made unique. The row itself is not modified."""
    if not isinstance(row, PromptRow):
        row = parse_prompt_row(row, 0)
    req = copy.deepcopy(dict(row.body))
    for msg in req["messages"]:
        if msg.get("role") == "_input":
            msg["role"] = "system"
        _normalise_message_reasoning(msg)
    _uniquify_tool_call_ids(req["messages"])
    if model:
        req["model"] = model
    return req


def load_result_rows(path: str | Path) -> list[dict[str, Any]]:
    """Read recorded result rows (full or trimmed). Each needs an integer ``data_index``; ``request`` and
    ``response`` must be objects when present; a duplicated ``data_index`` is an error."""
    path = Path(path)
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: dict[int, int] = {}
    for lineno, value, error in _iter_json_lines(path):
        where = f"{path}:{lineno}"
        if error:
            problems.append(f"{where}: {error}")
            continue
        if not isinstance(value, dict):
            problems.append(f"{where}: (line): expected a JSON object")
            continue
        idx = value.get("data_index")
        if isinstance(idx, bool) or not isinstance(idx, int):
            problems.append(f"{where}: data_index: required, an integer (the prompt file's line number)")
            continue
        if idx in seen:
            problems.append(f"{where}: data_index: {idx} already appeared on line {seen[idx]}")
            continue
        seen[idx] = lineno
        for name in ("request", "response"):
            if name in value and value[name] is not None and not isinstance(value[name], dict):
                problems.append(f"{where}: {name}: must be a JSON object")
        status = value.get("status")
        if status is not None and status not in ("success", "failed"):
            problems.append(f"{where}: status: must be 'success' or 'failed', not {status!r}")
        rows.append(value)
    if problems:
        _raise(problems)
    return rows


@dataclass
class Pairing:
    """Rows of a candidate and a baseline paired by ``data_index``."""

    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)  # (baseline, candidate)
    missing: list[int] = field(default_factory=list)  # in the baseline, not in the candidate
    extra: list[int] = field(default_factory=list)  # in the candidate, not in the baseline


def pair_by_data_index(baseline: list[Mapping[str, Any]], candidate: list[Mapping[str, Any]]) -> Pairing:
    base = {int(r["data_index"]): r for r in baseline}
    cand = {int(r["data_index"]): r for r in candidate}
    out = Pairing()
    for idx in sorted(base.keys() | cand.keys()):
        if idx in base and idx in cand:
            out.pairs.append((dict(base[idx]), dict(cand[idx])))
        elif idx in base:
            out.missing.append(idx)
        else:
            out.extra.append(idx)
    return out
