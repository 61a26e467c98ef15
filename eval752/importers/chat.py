"""Chat rows: ``{"messages": [system/user/assistant turns], "ref_answer": ..., <custom fields>}``.

The question is the last user turn; the turns before it (system prompt included) are its context and
the whole prompt is kept in ``meta["messages"]``. When the last message is an assistant turn:

* scoring (``eval752-score``): it is the **recorded response** being scored against ``ref_answer``; a row
  without ``ref_answer`` has no reference and is reported as unscored (diagnostics only), unless a
  checker that needs no reference is forced;
* running live (``items_from_file``): it is the **reference answer** when the row has no ``ref_answer``,
  and it is not sent.

``reasoning_content`` on that assistant turn is the response's reasoning.
"""
from __future__ import annotations

from pathlib import Path

from .common import Recorded, check_messages, check_unique, fail, jsonl_rows, make_item, message_text, \
    response_of, split_prompt

EXPECTED = 'chat rows: {"messages": [...], "ref_answer": ...}'


def read_chat(path: Path, *, live: bool = False) -> list[Recorded]:
    out = []
    for line, row in jsonl_rows(path, EXPECTED):
        if "messages" not in row:
            raise fail(path, line, "messages", f"required field is missing; expected {EXPECTED}")
        messages = check_messages(path, line, row["messages"])
        prompt, reply = split_prompt(path, line, messages)
        if reply is None and not live:
            raise fail(path, line, "messages", "the last message must be the assistant's recorded response to "
                       "score it (rows ending with a user turn can only be run live)")
        fallback = message_text(reply["content"] or "") if live and reply is not None else None
        item = make_item(path, line, row, message_text(prompt[-1]["content"]), answer=fallback,
                         extra_known=("messages",), meta={"messages": prompt})
        response = None if live else response_of(reply["content"], reply.get("reasoning_content"))
        out.append(Recorded(item, tuple(prompt), response, line))
    return check_unique(path, out)
