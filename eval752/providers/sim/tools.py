"""Tool calling: when a request offers ``tools`` (and ``tool_choice`` is not ``"none"``), the simulated
model calls one, with arguments generated from its JSON schema."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from .behaviours import Behaviour, register
from .context import Draft, RequestContext

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def _first_type(schema: dict[str, Any]) -> str | None:
    t = schema.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        return non_null[0] if non_null else "null"
    if t is None and "properties" in schema:
        return "object"
    return t


def value_for_schema(schema: Any, u: float, name: str = "value", depth: int = 0) -> Any:
    """A type-correct value for ``schema`` (``u`` in [0, 1) picks among enum members and words).

    Honours ``const``, ``enum``, ``default``-free types string/integer/number/boolean/array/object/null,
    ``anyOf``/``oneOf`` (first branch), ``minimum``/``maximum``, ``minLength``/``maxLength``,
    ``minItems``; objects get their ``required`` properties only.
    """
    if not isinstance(schema, dict):
        return name
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][int(u * len(schema["enum"]))]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            non_null = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            return value_for_schema((non_null or branches)[0], u, name, depth)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged.update(part)
        return value_for_schema(merged, u, name, depth)
    t = _first_type(schema)
    if t == "string":
        fmt = schema.get("format")
        if fmt == "date":
            return "2024-01-15"
        if fmt == "date-time":
            return "2024-01-15T12:00:00Z"
        if fmt == "email":
            return "user@example.com"
        if fmt in ("uri", "url"):
            return "https://example.com/"
        text = f"{name}-{_WORDS[int(u * len(_WORDS))]}"
        lo, hi = int(schema.get("minLength", 0)), schema.get("maxLength")
        if len(text) < lo:
            text = text + "x" * (lo - len(text))
        if isinstance(hi, int) and len(text) > hi:
            text = text[:hi]
        return text
    if t in ("integer", "number"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if schema.get("exclusiveMinimum") is not None and isinstance(schema["exclusiveMinimum"], (int, float)):
            lo = schema["exclusiveMinimum"] + (1 if t == "integer" else 0.5)
        value: float = 1 + int(u * 9)
        if lo is not None and value < lo:
            value = lo
        if hi is not None and value > hi:
            value = hi
        return int(value) if t == "integer" else float(value)
    if t == "boolean":
        return u < 0.5
    if t == "null":
        return None
    if t == "array":
        if depth > 6:
            return []
        count = max(1, int(schema.get("minItems", 1)))
        return [value_for_schema(schema.get("items", {"type": "string"}), u, name, depth + 1) for _ in range(count)]
    if t == "object":
        if depth > 6:
            return {}
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        return {k: value_for_schema(props.get(k, {"type": "string"}), u, k, depth + 1) for k in required}
    return name


def arguments_for(function: dict[str, Any], u: float) -> dict[str, Any]:
    params = function.get("parameters") or {"type": "object", "properties": {}}
    value = value_for_schema(params, u, "args")
    return value if isinstance(value, dict) else {}


def pick_tool(ctx: RequestContext) -> dict[str, Any] | None:
    """The forced tool (``tool_choice`` naming a function), else the entry's ``tool``, else the first."""
    functions = [t.get("function") or {} for t in ctx.tools if isinstance(t, dict)]
    functions = [f for f in functions if isinstance(f, dict) and f.get("name")]
    if not functions:
        return None
    choice = ctx.body.get("tool_choice")
    wanted = None
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
    elif ctx.entry is not None and ctx.entry.get("tool"):
        wanted = ctx.entry["tool"]
    for f in functions:
        if f["name"] == wanted:
            return f
    return functions[0]


@register
class ToolCallBehaviour(Behaviour):
    """Replaces the reply with one tool call (``finish_reason="tool_calls"``, ``content`` null).

    It stays quiet when ``tool_choice`` is ``"none"``, and when the last message is a tool result and
    ``tool_choice`` is not ``"required"`` (the model then answers with the result in hand). The
    arguments are the entry's ``arguments`` when it has them, else generated from the schema.
    """

    name = "tool_calls"

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        if not ctx.tools:
            return draft
        choice = ctx.body.get("tool_choice")
        if choice == "none":
            return draft
        msgs = ctx.messages
        if msgs and isinstance(msgs[-1], dict) and msgs[-1].get("role") == "tool" and choice != "required" \
                and not isinstance(choice, dict):
            return draft
        function = pick_tool(ctx)
        if function is None:
            return draft
        entry_args = ctx.entry.get("arguments") if ctx.entry is not None else None
        if isinstance(entry_args, dict) and (ctx.entry or {}).get("tool", function["name"]) == function["name"]:
            args = entry_args
        else:
            args = arguments_for(function, ctx.draw("tool_args", draft.index))
        ident = f"{ctx.settings.seed}:{ctx.item}:{ctx.req_seed}:{draft.index}"
        call_id = "call_" + hashlib.sha256(ident.encode()).hexdigest()[:24]
        draft.tool_calls = [{
            "id": call_id,
            "type": "function",
            "function": {"name": function["name"], "arguments": json.dumps(args, ensure_ascii=False)},
        }]
        draft.content = None
        draft.finish_reason = "tool_calls"
        return draft
