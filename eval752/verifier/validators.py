"""The verifier's per-row validators, with upstream (MiniMax-Provider-Verifier) field names.

``validate_rows`` runs every validator a row asks for and returns one dict of fields per row:

* always: ``error_only_reasoning_checked`` (1), ``error_only_reasoning`` (reasoning present, content
  empty, no tool calls). Upstream reads only ``message.reasoning``; eval752 also accepts
  ``message.reasoning_content`` (what vLLM/SGLang-style servers send), so a vendor cannot hide the failure
  by naming the field differently.
* ``tool_calls`` (the default when a row names no check): ``tool_calls_finish_reason``,
  ``tool_calls_valid``, ``tool_calls_count`` and eval752's ``tool_calls_reason`` (why the first call failed).
* ``contains_russian_characters_unicode``: ``language_following_checked``, ``language_following_valid``.
* ``repeat_n_gram``: ``error_repeating_checked``, ``error_repeating`` (True = repetition found; the field the
  eval752 issue names), plus upstream's ``error_repeating_valid`` (its negation) and ``error_repeating_config``.
* ``scenario_check``: ``scenario_check_checked``, ``scenario_check_valid``, ``scenario_check_detail``.

Text validators look only at successful responses with non-empty content; the two text scans run
batch-wise over all such rows through ``textscan`` (numba kernels when available).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from .responses import first_choice, response_content, response_message
from .rows import CHECK_LANGUAGE, CHECK_REPEAT, CHECK_SCENARIO, CHECK_TOOL_CALLS
from . import textscan

SHELLS = frozenset(
    ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/sh", "/usr/bin/zsh")
)
# A command word followed by a space at the start of an element means "command and arguments merged".
MERGED_COMMAND_PREFIXES = tuple(
    f"{w} "
    for w in (
        "ls", "cat", "git", "npm", "npx", "cd", "cp", "mv", "rm", "mkdir", "chmod", "chown",
        "find", "grep", "curl", "wget", "pip",
    )
)
# Keys that describe a parameters object rather than name a parameter (for schemas without "properties").
SCHEMA_KEYWORDS = frozenset(
    ("type", "description", "required", "additionalProperties", "$schema", "items", "enum", "default")
)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)


@dataclass(frozen=True)
class RowToCheck:
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None
    status: str  # "success" or "failed"
    checks: tuple[str, ...]  # validators to run (see PromptRow.validators)


# --- error-only reasoning -----------------------------------------------------------------------------


def is_error_only_reasoning(response: Mapping[str, Any] | None) -> bool:
    if not response or not response.get("choices"):
        return False
    msg = response_message(response)
    reasoning = msg.get("reasoning") or msg.get("reasoning_content")
    calls = msg.get("tool_calls")
    has_calls = len(calls) > 0 if isinstance(calls, list) else bool(calls)
    return bool(reasoning) and not msg.get("content") and not has_calls


# --- tool calls -----------------------------------------------------------------------------------------


def _is_shell_dash_c(cmd: list[Any]) -> bool:
    """``[shell, (-l|--login)*, -c|-lc, script...]`` with at least three elements."""
    if len(cmd) < 3 or cmd[0] not in SHELLS:
        return False
    for arg in cmd[1:]:
        if arg in ("-c", "-lc"):
            return True
        if arg not in ("-l", "--login"):
            return False
    return False


def is_valid_array_command(cmd: Any) -> bool:
    """An argv-style ``command`` must keep a command and its arguments apart: ``["ls -la"]`` fails,
    ``["ls", "-la"]`` and ``["bash", "-lc", "ls -la"]`` pass. Empty lists and non-string items fail."""
    if not isinstance(cmd, list) or not cmd:
        return False
    if _is_shell_dash_c(cmd):
        return True
    for elem in cmd:
        if not isinstance(elem, str):
            return False
        if " " in elem and elem.startswith(MERGED_COMMAND_PREFIXES):
            return False
    return not (len(cmd) == 1 and " " in cmd[0])


@lru_cache(maxsize=1024)
def _compiled_schema(schema_json: str) -> Any:
    from jsonschema.validators import validator_for  # imported on first use

    schema = json.loads(schema_json)
    cls = validator_for(schema)
    cls.check_schema(schema)  # SchemaError for a broken schema, as jsonschema.validate raises
    return cls(schema)


def _schema_for(tools: Sequence[Any], name: Any) -> Any:
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and fn.get("name") == name:
            return fn.get("parameters")
    return None


def check_arguments(name: Any, schema: Any, args: Any) -> tuple[bool, str | None, Any]:
    """``(valid, reason, decoded arguments)``: arguments given as a JSON string are decoded, then validated
    against the tool's JSON schema."""
    from jsonschema import exceptions as js_exc
    from jsonschema.exceptions import SchemaError

    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            return False, f"arguments of {name!r} are not valid JSON ({exc.msg})", args
    try:
        validator = _compiled_schema(json.dumps(schema, sort_keys=True))
    except (SchemaError, TypeError, ValueError) as exc:
        return False, f"tool {name!r} has an invalid parameters schema ({type(exc).__name__})", args
    error = js_exc.best_match(validator.iter_errors(args))
    if error is not None:
        return False, f"arguments of {name!r} do not match its schema: {error.message}", args
    return True, None, args


def validate_tool_call(call: Any, tools: Sequence[Any]) -> tuple[bool, str | None]:
    """(valid, reason). The call must name a declared tool whose ``parameters`` schema is non-empty, its
    arguments (JSON string or object) must validate against it, and an argv-style ``command`` array
    parameter (``type: array`` of ``string`` items) must pass ``is_valid_array_command`` when present."""
    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping) or "name" not in fn:
        return False, "malformed tool call: no function name"
    name = fn["name"]
    schema = _schema_for(tools, name)
    if not schema:
        declared = any(isinstance(t, Mapping) and (t.get("function") or {}).get("name") == name for t in tools)
        return False, (f"tool {name!r} declares no parameters schema" if declared else f"undeclared tool {name!r}")
    ok, reason, args = check_arguments(name, schema, fn.get("arguments"))
    if not ok:
        return False, reason
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    for pname, pschema in (props or {}).items():
        if not (pname == "command" and isinstance(pschema, Mapping) and pschema.get("type") == "array"):
            continue
        items = pschema.get("items", {})
        if not (isinstance(items, Mapping) and items.get("type") == "string"):
            continue
        if not isinstance(args, Mapping):
            return False, f"arguments of {name!r} are not an object"
        value = args.get("command")
        if value is not None and not is_valid_array_command(value):
            return False, f"command of {name!r} merges a command and its arguments: {value!r}"
    return True, None


def tool_calls_fields(request: Mapping[str, Any], response: Mapping[str, Any] | None, status: str) -> dict:
    out: dict[str, Any] = {
        "tool_calls_finish_reason": None,
        "tool_calls_valid": None,
        "tool_calls_count": 0,
        "tool_calls_reason": None,
    }
    choice = first_choice(response)
    if status != "success" or choice is None:
        return out
    finish = choice.get("finish_reason")
    out["tool_calls_finish_reason"] = finish
    if finish != "tool_calls":
        return out
    calls = response_message(response).get("tool_calls") or []
    tools = request.get("tools") or []
    out["tool_calls_count"] = len(calls)
    if not calls:
        out["tool_calls_valid"] = False
        out["tool_calls_reason"] = "finish_reason is tool_calls but the message has no tool calls"
        return out
    out["tool_calls_valid"] = True
    for call in calls:
        ok, reason = validate_tool_call(call, tools)
        if not ok:
            out["tool_calls_valid"] = False
            out["tool_calls_reason"] = reason
            break
    return out


# --- scenario check -------------------------------------------------------------------------------------


def expected_param_order(request: Mapping[str, Any]) -> list[str] | None:
    """The first tool's ``parameters.properties`` keys in declared order (for a parameters object without
    ``properties``, its non-keyword keys, as upstream); None when there is nothing to expect."""
    tools = request.get("tools")
    if not tools or not isinstance(tools, list) or not isinstance(tools[0], Mapping):
        return None
    params = (tools[0].get("function") or {}).get("parameters") or {}
    if not isinstance(params, Mapping) or not params:
        return None
    if "properties" in params:
        return list(params["properties"] or {})
    keys = [k for k in params if k not in SCHEMA_KEYWORDS]
    return keys or None


def visible_content(text: str) -> str:
    """The reply without ``<think>...</think>`` blocks, stripped."""
    return _THINK_BLOCK.sub("", text).strip()


def scenario_fields(request: Mapping[str, Any], content: str | None, status: str) -> dict[str, Any]:
    out: dict[str, Any] = {"scenario_check_checked": False, "scenario_check_valid": None, "scenario_check_detail": None}
    if status != "success" or not content:
        return out
    expected = expected_param_order(request)
    if not expected:
        return out
    visible = visible_content(content)
    found = sorted(((visible.find(p), i, p) for i, p in enumerate(expected) if p in visible))
    actual = [p for _, _, p in found]
    out["scenario_check_checked"] = True
    out["scenario_check_valid"] = len(actual) >= 2 and actual == expected[: len(actual)]
    out["scenario_check_detail"] = {"expected": expected, "actual": actual}
    return out


# --- all validators over a batch ------------------------------------------------------------------------


def validate_rows(
    rows: Sequence[RowToCheck], *, n: int = 3, threshold: int = 4, backend: str = "auto"
) -> list[dict[str, Any]]:
    """One dict of validator fields per row. The Cyrillic and n-gram scans run once over the batch."""
    fields: list[dict[str, Any]] = []
    lang_rows: list[int] = []
    repeat_rows: list[int] = []
    contents: list[str | None] = []
    for i, row in enumerate(rows):
        out: dict[str, Any] = {
            "error_only_reasoning_checked": 1,
            "error_only_reasoning": is_error_only_reasoning(row.response),
        }
        content = response_content(row.response) if row.status == "success" else None
        contents.append(content)
        checkable = row.status == "success" and bool(content)
        if CHECK_TOOL_CALLS in row.checks:
            out.update(tool_calls_fields(row.request, row.response, row.status))
        if CHECK_LANGUAGE in row.checks:
            out.update(language_following_checked=False, language_following_valid=None)
            if checkable:
                lang_rows.append(i)
        if CHECK_REPEAT in row.checks:
            out.update(
                error_repeating_checked=False,
                error_repeating=None,
                error_repeating_valid=None,
                error_repeating_config={"n": n, "repeat_count": threshold},
            )
            if checkable:
                repeat_rows.append(i)
        if CHECK_SCENARIO in row.checks:
            out.update(scenario_fields(row.request, content, row.status))
        fields.append(out)
    if lang_rows:
        flags = textscan.has_cyrillic([contents[i] for i in lang_rows], backend=backend)  # type: ignore[misc]
        for i, flag in zip(lang_rows, flags):
            fields[i]["language_following_checked"] = True
            fields[i]["language_following_valid"] = not bool(flag)
    if repeat_rows:
        flags = textscan.ngram_repeats(
            [contents[i] for i in repeat_rows], n=n, threshold=threshold, backend=backend  # type: ignore[misc]
        )
        for i, flag in zip(repeat_rows, flags):
            fields[i]["error_repeating_checked"] = True
            fields[i]["error_repeating"] = bool(flag)
            fields[i]["error_repeating_valid"] = not bool(flag)
    return fields
