"""Conversation rows: ``{"system": ..., "conversation": [{"prompt": ..., "response": ...}, ...]}``.

The final ``prompt`` is the question and the final ``response`` the recorded answer; earlier turns are
context (kept, with the system prompt, as ``meta["messages"]``). The reference is ``ref_answer`` or
``answer``; without one the row is unscored (diagnostics only) when scoring, and, when run live, the
final response becomes the reference (as for chat rows). The final ``response`` may be absent or null
only when running live; a null response while scoring is recorded as a failed response.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import Recorded, check_unique, fail, jsonl_rows, make_item, response_of

EXPECTED = 'conversation rows: {"system": ..., "conversation": [{"prompt": ..., "response": ...}]}'


def read_conversation(path: Path, *, live: bool = False) -> list[Recorded]:
    out = []
    for line, row in jsonl_rows(path, EXPECTED):
        turns = row.get("conversation")
        if not isinstance(turns, list) or not turns:
            raise fail(path, line, "conversation", f"expected a non-empty list of turns; {EXPECTED}")
        system = row.get("system")
        if system is not None and not isinstance(system, str):
            raise fail(path, line, "system", "expected a string")
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        for i, turn in enumerate(turns):
            last = i == len(turns) - 1
            if not isinstance(turn, dict) or not isinstance(turn.get("prompt"), str):
                raise fail(path, line, f"conversation[{i}].prompt", "expected a string")
            messages.append({"role": "user", "content": turn["prompt"]})
            reply = turn.get("response")
            if not last:
                if not isinstance(reply, str):
                    raise fail(path, line, f"conversation[{i}].response", "expected a string (an earlier turn)")
                messages.append({"role": "assistant", "content": reply})
            elif not live and "response" not in turn:
                raise fail(path, line, f"conversation[{i}].response",
                           "the final turn needs the recorded response to be scored")
            elif reply is not None and not isinstance(reply, str):
                raise fail(path, line, f"conversation[{i}].response", "expected a string or null")
        final = turns[-1].get("response")
        item = make_item(path, line, row, turns[-1]["prompt"], answer=final if live else None,
                         extra_known=("system", "conversation"), meta={"messages": messages})
        out.append(Recorded(item, tuple(messages), None if live else response_of(final), line))
    return check_unique(path, out)
