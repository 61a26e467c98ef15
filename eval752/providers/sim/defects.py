"""Vendor defects and the ``official`` answer mode: how the simulated vendor plays a faithful deployment of a
model, and the ways third-party deployments are seen to break it (what the vendor verifier catches).

``official`` (an ``after`` behaviour) answers vendor-verifier prompt rows as the official deployment does.
It reads the row's labels from the answer-key entry the live verifier registers per prompt row: entry id =
the row's ``data_index`` (sent as the ``X-Eval752-Item`` header), ``type`` ``"verifier"``, ``answer``
``{"expected_tool_call": true|false|null, "checks": [...]}``. It then

* calls a tool iff the row expects one (an unlabelled row: iff it runs the ``tool_calls`` check, offers
  tools and its last message is not a tool result; without an entry: iff tools are offered and the last
  message is not a tool result). The tool is the first one whose name the prompt mentions, else the
  first declared; the arguments hold every required property, schema-valid, and an argv ``command``
  array is ``["bash", "-lc", "<script>"]`` (the script is the prompt's first `backticked` text, else
  ``ls -la``);
* otherwise answers in the prompt's language (Japanese when the prompt has kana or kanji) with short,
  non-repetitive text and no Cyrillic; a ``scenario_check`` row lists the first tool's property names
  in their declared order.

Defects run after it (configure them after ``official``). Each fires for a drafted choice when
``ctx.draw("defect:<name>", index) < rate`` (default rate 1.0), so they are deterministic from the sim seed,
the item and the request's ``seed``:

``drop_tool_calls``   a tool call becomes a text reply (finish ``stop``)
``invalid_tool_args`` the first call's arguments are not JSON, or miss the required properties
``merge_shell_args``  ``command: ["bash", "-lc", "ls -la"]`` becomes ``["ls -la"]``
``reasoning_only``    a text reply moves into ``reasoning_content``; content empty, no calls
``cyrillic_leak``     Cyrillic words are spliced into a text reply (as a wrong top-k sampler does)
``repetition_loop``   a text reply ends in a degenerate loop of one phrase
``resort_json_keys``  keys come out re-ordered: tool-call argument keys reversed, and property names a
                      text reply lists (a scenario answer) in reverse order
``fail_requests``     HTTP 500 for a share of attempts (a fault: drawn per attempt, so retries can pass)
"""
from __future__ import annotations

import json
import re
from typing import Any

from .answers import DRAFTERS, generic_text
from .behaviours import Behaviour, register
from .context import Draft, RequestContext
from .faults import Fault
from .tools import value_for_schema
from .wire import error_response

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_BACKTICKED = re.compile(r"`([^`]+)`")
DEFAULT_SCRIPT = "ls -la"

OFFICIAL_TEXT = {
    "en": (
        "Sure. In short: the answer depends on your setup, so start small and adjust later.",
        "Here is my reply, kept brief: yes, that works well for most common cases.",
        "Good question! Briefly put, it is usually fine, but verify it on your own data first.",
        "Happy to help. My short answer: keep it simple and test each change once.",
    ),
    "ja": (
        "承知しました。要点だけ述べると、まず小さく試してから調整するのがおすすめです。",
        "ご質問ありがとうございます。結論から言えば、多くの場合は問題ありません。",
        "はい、簡単に説明します。基本的な考え方を押さえれば難しくありません。",
        "お役に立てれば幸いです。短くまとめると、手順を一つずつ確認してください。",
    ),
}
DECLINE_TEXT = {
    "en": "I can take care of that. Tell me if you want me to go ahead.",
    "ja": "対応できます。進めてよければお知らせください。",
}
CYRILLIC_WORDS = ("привет", "значит", "конечно", "поэтому")
LOOP_PHRASES = ("and then again", "the same step", "one more time")


def language_of(text: str) -> str:
    return "ja" if _JAPANESE.search(text or "") else "en"


def _draft_verifier(ctx: RequestContext, entry: dict, correct: bool, index: int) -> str:
    """What the plain ``answer`` behaviour says to a verifier row: a generic sentence (labels stay hidden)."""
    return generic_text(ctx, index)


DRAFTERS.setdefault("verifier", _draft_verifier)


def _functions(ctx: RequestContext) -> list[dict[str, Any]]:
    out = []
    for tool in ctx.tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out.append(fn)
    return out


def _last_is_tool_result(ctx: RequestContext) -> bool:
    msgs = ctx.messages
    return bool(msgs) and isinstance(msgs[-1], dict) and msgs[-1].get("role") == "tool"


def _is_argv_command(name: str, schema: Any) -> bool:
    if name != "command" or not isinstance(schema, dict) or schema.get("type") != "array":
        return False
    items = schema.get("items")
    return isinstance(items, dict) and items.get("type") == "string"


def official_arguments(function: dict[str, Any], prompt: str, u: float) -> dict[str, Any]:
    """Every required property of ``function``'s parameters, valid against its schema; an argv
    ``command`` array runs the prompt's first backticked text through ``bash -lc``."""
    params = function.get("parameters")
    if not isinstance(params, dict):
        return {}
    props = params.get("properties") or {}
    args: dict[str, Any] = {}
    for name in params.get("required") or []:
        schema = props.get(name, {"type": "string"})
        if _is_argv_command(name, schema):
            found = _BACKTICKED.search(prompt)
            args[name] = ["bash", "-lc", found.group(1) if found else DEFAULT_SCRIPT]
        else:
            args[name] = value_for_schema(schema, u, name)
    return args


def expected_property_names(ctx: RequestContext) -> list[str]:
    """The first tool's ``parameters.properties`` names in declared order."""
    fns = _functions(ctx)
    params = fns[0].get("parameters") if fns else None
    props = params.get("properties") if isinstance(params, dict) else None
    return list(props) if isinstance(props, dict) else []


@register
class Official(Behaviour):
    """Answers as the official deployment does (see the module docstring)."""

    name = "official"

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        labels = (ctx.entry or {}).get("answer") if ctx.entry is not None else None
        labels = labels if isinstance(labels, dict) else {}
        checks = labels.get("checks") or ["tool_calls"]
        expected = labels.get("expected_tool_call")
        functions = _functions(ctx)
        if expected is None:
            wants_call = "tool_calls" in checks and bool(functions) and not _last_is_tool_result(ctx)
        else:
            wants_call = bool(expected) and bool(functions)
        draft.tool_calls = []
        if wants_call:
            self._call(ctx, draft, functions)
        else:
            lang = language_of(ctx.prompt)
            names = expected_property_names(ctx) if "scenario_check" in checks else []
            if len(names) >= 2:
                tool = functions[0]["name"]
                listed = ", ".join(names) if lang == "en" else "、".join(names)
                draft.content = (f"The {tool} tool takes these parameters, in order: {listed}." if lang == "en"
                                 else f"{tool} の引数は定義順に {listed} です。")
            else:
                draft.content = ctx.choose("official_text", OFFICIAL_TEXT[lang], draft.index)
            draft.finish_reason = "stop"
        if draft.reasoning is not None:  # the reasoning behaviour is on: keep it consistent with the reply
            said = f"call {draft.tool_calls[0]['function']['name']}" if draft.tool_calls else "answer directly"
            draft.reasoning = f"The user asks something I can handle; I will {said}."
        return draft

    def _call(self, ctx: RequestContext, draft: Draft, functions: list[dict[str, Any]]) -> None:
        prompt = ctx.prompt
        function = next((f for f in functions if f["name"] in prompt), functions[0])
        args = official_arguments(function, prompt, ctx.draw("tool_args", draft.index))
        call_id = f"call_{ctx.item}_{draft.index}".replace(" ", "_")
        draft.tool_calls = [{"id": call_id, "type": "function",
                             "function": {"name": function["name"], "arguments": json.dumps(args, ensure_ascii=False)}}]
        draft.content = None
        draft.finish_reason = "tool_calls"


class Defect(Behaviour):
    """A defect that transforms a drafted choice with probability ``rate``; subclasses implement ``apply``
    and return whether they changed anything (``draft.extra["defects"]`` lists what fired)."""

    name = "defect"

    def __init__(self, settings=None, rate: float = 1.0) -> None:
        super().__init__(settings)
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"{self.name}: rate must be in [0, 1], got {rate}")
        self.rate = float(rate)

    def applies(self, draft: Draft) -> bool:
        return True

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        if self.applies(draft) and ctx.draw(f"defect:{self.name}", draft.index) < self.rate:
            if self.apply(ctx, draft) is not False:
                draft.extra.setdefault("defects", []).append(self.name)
        return draft

    def apply(self, ctx: RequestContext, draft: Draft) -> bool | None:
        raise NotImplementedError


class ToolCallDefect(Defect):
    def applies(self, draft: Draft) -> bool:
        return bool(draft.tool_calls)


class TextDefect(Defect):
    def applies(self, draft: Draft) -> bool:
        return not draft.tool_calls and bool(draft.content)


@register
class DropToolCalls(ToolCallDefect):
    name = "drop_tool_calls"

    def apply(self, ctx, draft):
        draft.tool_calls = []
        draft.content = DECLINE_TEXT[language_of(ctx.prompt)]
        draft.finish_reason = "stop"


@register
class InvalidToolArgs(ToolCallDefect):
    """Half of the time (by draw) the arguments are cut-off JSON; otherwise the required properties are
    left out (cut-off JSON when the schema requires none)."""

    name = "invalid_tool_args"

    def apply(self, ctx, draft):
        fn = draft.tool_calls[0]["function"]
        schema = next((f.get("parameters") for f in _functions(ctx) if f["name"] == fn["name"]), None)
        required = schema.get("required") if isinstance(schema, dict) else None
        if required and ctx.draw("defect:invalid_tool_args:mode", draft.index) < 0.5:
            args = json.loads(fn["arguments"])
            fn["arguments"] = json.dumps({k: v for k, v in args.items() if k not in required}, ensure_ascii=False)
        else:
            fn["arguments"] = fn["arguments"][: max(1, len(fn["arguments"]) // 2)]


@register
class MergeShellArgs(ToolCallDefect):
    name = "merge_shell_args"

    def apply(self, ctx, draft):
        changed = False
        for call in draft.tool_calls:
            try:
                args = json.loads(call["function"]["arguments"])
            except json.JSONDecodeError:
                continue
            cmd = args.get("command") if isinstance(args, dict) else None
            if isinstance(cmd, list) and len(cmd) >= 3 and cmd[1] in ("-c", "-lc"):
                args["command"] = [" ".join(str(x) for x in cmd[2:])]
                call["function"]["arguments"] = json.dumps(args, ensure_ascii=False)
                changed = True
        return changed


@register
class ReasoningOnly(TextDefect):
    name = "reasoning_only"

    def apply(self, ctx, draft):
        draft.reasoning = f"{draft.reasoning}\n{draft.content}" if draft.reasoning else draft.content
        draft.content = ""
        draft.finish_reason = "stop"


@register
class CyrillicLeak(TextDefect):
    name = "cyrillic_leak"

    def apply(self, ctx, draft):
        word = ctx.choose("defect:cyrillic_leak:word", CYRILLIC_WORDS, draft.index)
        content = draft.content or ""
        cut = content.find(" ", len(content) // 2)
        cut = len(content) // 2 if cut < 0 else cut
        draft.content = f"{content[:cut]} {word} {content[cut:].lstrip()}"


@register
class RepetitionLoop(TextDefect):
    name = "repetition_loop"

    def __init__(self, settings=None, rate: float = 1.0, times: int = 8) -> None:
        super().__init__(settings, rate)
        self.times = int(times)

    def apply(self, ctx, draft):
        phrase = ctx.choose("defect:repetition_loop:phrase", LOOP_PHRASES, draft.index)
        draft.content = f"{draft.content} " + " ".join([phrase] * self.times)


@register
class ResortJsonKeys(Defect):
    name = "resort_json_keys"

    def apply(self, ctx, draft):
        changed = False
        for call in draft.tool_calls:
            try:
                args = json.loads(call["function"]["arguments"])
            except json.JSONDecodeError:
                continue
            if isinstance(args, dict) and len(args) >= 2:
                call["function"]["arguments"] = json.dumps(dict(reversed(list(args.items()))), ensure_ascii=False)
                changed = True
        if draft.content:
            new = reverse_listed_names(draft.content, expected_property_names(ctx))
            changed = changed or new != draft.content
            draft.content = new
        return changed


def reverse_listed_names(text: str, names: list[str]) -> str:
    """``text`` with the property names it mentions (first occurrences, in text order) written back in
    reverse order at the same places; unchanged when fewer than two are mentioned."""
    spans = []
    for name in names:
        at = text.find(name)
        if at >= 0:
            spans.append((at, at + len(name), name))
    spans.sort()
    if len(spans) < 2 or any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        return text
    order = [s[2] for s in reversed(spans)]
    out, pos = [], 0
    for (start, end, _), name in zip(spans, order):
        out += [text[pos:start], name]
        pos = end
    return "".join(out) + text[pos:]


@register
class FailRequests(Fault):
    """HTTP 500 for a share ``rate`` of attempts (``attempts: N`` limits it to the first N of each request)."""

    name = "fail_requests"

    async def respond(self, ctx):
        return error_response(500, "Internal server error (simulated vendor defect).", "server_error")
