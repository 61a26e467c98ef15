"""Eval-only rows: a question, a reference and the recorded responses of several models, n per model.

```
{"id": "q1", "prompt": "2+2?", "answer": "4",
 "model_outputs": [{"model_name": "m1", "responses": [{"content": "4", "reasoning_content": "..."}, ...]},
                   {"model_name": "m2", "responses": [...]}]}
```

The question is ``prompt`` or ``question`` (strings) or ``messages`` (its last user turn, the turns before
it as context). The reference is ``answer`` or ``ref_answer``; ``type`` and ``choices`` are optional
(freeform by default, mcq_single when choices are given). Response ``i`` of a model is sample ``i``; a
null ``content`` is a failed response (scored as wrong). Each model's results roll up separately (see
``rollup.py``). When run live only the question and the reference are used.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import Recorded, check_messages, check_unique, fail, jsonl_rows, make_item, message_text, \
    response_of, split_prompt

EXPECTED = ('eval-only rows: {"prompt"|"question"|"messages": ..., "answer": ..., "model_outputs": '
            '[{"model_name": ..., "responses": [{"content": ...}]}]}')


def _question(path: Path, line: int, row: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    for key in ("prompt", "question"):
        if key in row:
            if not isinstance(row[key], str):
                raise fail(path, line, key, "expected a string")
            return row[key], [{"role": "user", "content": row[key]}]
    if "messages" in row:
        prompt, _ = split_prompt(path, line, check_messages(path, line, row["messages"]))
        return message_text(prompt[-1]["content"]), prompt
    raise fail(path, line, "prompt", f"no question (prompt, question or messages); expected {EXPECTED}")


def read_eval_only(path: Path, *, live: bool = False) -> list[Recorded]:
    out = []
    for line, row in jsonl_rows(path, EXPECTED):
        text, prompt = _question(path, line, row)
        meta = {"messages": prompt} if "messages" in row else {}
        item = make_item(path, line, row, text, meta=meta,
                         extra_known=("prompt", "question", "messages", "model_outputs"))
        outputs = row.get("model_outputs")
        if live:
            out.append(Recorded(item, tuple(prompt), None, line))
            continue
        if not isinstance(outputs, list) or not outputs:
            raise fail(path, line, "model_outputs", f"expected a non-empty list; {EXPECTED}")
        seen: set[str] = set()
        for i, mo in enumerate(outputs):
            where = f"model_outputs[{i}]"
            if not isinstance(mo, dict) or not isinstance(mo.get("model_name"), str) or not mo["model_name"]:
                raise fail(path, line, f"{where}.model_name", "expected a non-empty string")
            name = mo["model_name"]
            if name in seen:
                raise fail(path, line, f"{where}.model_name", f"{name!r} appears twice in this row")
            seen.add(name)
            responses = mo.get("responses")
            if not isinstance(responses, list) or not responses:
                raise fail(path, line, f"{where}.responses", "expected a non-empty list of {\"content\": ...}")
            for j, r in enumerate(responses):
                if not isinstance(r, dict) or "content" not in r:
                    raise fail(path, line, f"{where}.responses[{j}]", 'expected an object with "content"')
                if r["content"] is not None and not isinstance(r["content"], str):
                    raise fail(path, line, f"{where}.responses[{j}].content", "expected a string or null")
                response = response_of(r["content"], r.get("reasoning_content"))
                out.append(Recorded(item, tuple(prompt), response, line, sample=j, model=name))
    return check_unique(path, out)
