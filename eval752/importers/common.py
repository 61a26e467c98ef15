"""What every importer shares: the ``Recorded`` row, the location-naming error, and the field rules that
turn a foreign row into an ``Item`` (type, choices, reference, per-row parameters, custom fields in meta).

Field rules common to the chat, conversation, eval-only and CSV formats:

* ``id`` (string or number) names the item; without one it is ``line<N>`` (N = the line in the file).
  Ids must be unique within a file (eval-only rows share an item across their models and samples).
* the reference is ``ref_answer`` or, when absent, ``answer``; a number becomes its ``str()``, a boolean
  is refused. With ``choices`` (a list of strings) the type defaults to ``mcq_single`` (``mcq_multi`` when
  the reference is a list) and the reference may be the option's text or its letter (``"B"``);
  otherwise the type defaults to ``freeform``. ``type`` and ``checker`` may be given per row.
* ``max_tokens``, ``temperature``, ``top_p``, ``top_k``, ``seed`` and ``stop`` become the item's params.
* every other field is kept in the item's ``meta`` (judge templates can read it), unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..datasets.jsonl import LineProblem, iter_jsonl, json_type
from ..errors import InputFormatError
from ..types import ITEM_TYPES, Item, Response

PARAM_KEYS = ("max_tokens", "temperature", "top_p", "top_k", "seed", "stop")
REFERENCE_KEYS = ("ref_answer", "answer")
ITEM_KEYS = ("id", "type", "choices", "checker", *REFERENCE_KEYS, *PARAM_KEYS)
ROLES = ("system", "user", "assistant", "tool")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Recorded:
    """One imported row: the item, the prompt messages, and the recorded response (None: none recorded)."""

    item: Item
    messages: tuple[dict[str, Any], ...]
    response: Response | None
    line: int
    sample: int = 0
    model: str | None = None


def fail(path: Path | str, line: int | str, field: str, what: str) -> InputFormatError:
    return InputFormatError(f"{path}:{line}: {field}: {what}")


def jsonl_rows(path: Path, expected: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` for each non-blank line; anything else is an error naming file:line."""
    for line, value in iter_jsonl(path):
        if isinstance(value, LineProblem):
            raise fail(path, line, "-", f"{value.message}; expected one JSON object per line ({expected})")
        if not isinstance(value, dict):
            raise fail(path, line, "-", f"expected a JSON object ({expected}), got {json_type(value)}")
        yield line, value


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts joined."""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")


def check_messages(path: Path, line: int, value: Any, field: str = "messages") -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise fail(path, line, field, f"expected a non-empty list of messages, got {json_type(value)}")
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise fail(path, line, f"{field}[{i}]", f"expected a message object, got {json_type(m)}")
        if m.get("role") not in ROLES:
            raise fail(path, line, f"{field}[{i}].role", f"expected one of {', '.join(ROLES)}, got {m.get('role')!r}")
        content = m.get("content")
        if not (isinstance(content, str) or (isinstance(content, list) and all(isinstance(p, dict) for p in content))
                or (content is None and m["role"] == "assistant")):
            raise fail(path, line, f"{field}[{i}].content", f"expected a string or a list of parts, got "
                       f"{json_type(content)}")
    return [dict(m) for m in value]


def split_prompt(path: Path, line: int, messages: list[dict[str, Any]], field: str = "messages"
                 ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """``(prompt messages ending with the last user turn, the assistant turn after it or None)``."""
    last = messages[-1]
    prompt, reply = (messages[:-1], last) if last["role"] == "assistant" else (messages, None)
    if not prompt or prompt[-1]["role"] != "user":
        raise fail(path, line, field, "expected a user turn (the question) last, or just before a final "
                   "assistant turn")
    return prompt, reply


def response_of(text: Any, reasoning: Any = None) -> Response:
    """A recorded answer; null content is recorded as a failed response (scored as wrong, counted apart)."""
    if text is None:
        return Response(error="no content recorded")
    return Response(text=text, reasoning=reasoning if isinstance(reasoning, str) else None, finish_reason="stop")


def _reference(path: Path, line: int, row: dict[str, Any]) -> tuple[str, Any]:
    for key in REFERENCE_KEYS:
        if key in row and row[key] is not None:
            value = row[key]
            if isinstance(value, bool) or not isinstance(value, (str, int, float, list)):
                raise fail(path, line, key, f"expected a string, a number or a list of strings, got {json_type(value)}")
            if isinstance(value, list) and not all(isinstance(v, str) for v in value):
                raise fail(path, line, key, "expected a list of strings")
            return key, str(value) if isinstance(value, (int, float)) else value
    return "", None


def _choice_text(path: Path, line: int, key: str, choices: tuple[str, ...], value: str) -> str:
    if value in choices:
        return value
    if len(value) == 1 and value.upper() in LETTERS[: len(choices)]:
        return choices[LETTERS.index(value.upper())]
    raise fail(path, line, key, f"{value!r} is neither one of the choices {list(choices)} nor an option letter")


def make_item(path: Path, line: int, row: dict[str, Any], text: str, *, answer: Any = None,
              extra_known: Iterable[str] = (), meta: dict[str, Any] | None = None) -> Item:
    """An ``Item`` from a row's common fields; ``answer`` is the fallback reference (live runs)."""
    if not isinstance(text, str) or not text.strip():
        raise fail(path, line, "prompt", "the question is empty")
    raw_id = row.get("id", f"line{line}")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise fail(path, line, "id", f"expected a string or an integer, got {json_type(raw_id)}")
    key, reference = _reference(path, line, row)
    if reference is None:
        key, reference = "answer", answer
    choices = row.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) for c in choices):
            raise fail(path, line, "choices", "expected a list of at least two strings")
        choices = tuple(choices)
    default_type = "freeform" if choices is None else ("mcq_multi" if isinstance(reference, list) else "mcq_single")
    kind = row.get("type", default_type)
    if kind not in ITEM_TYPES:
        raise fail(path, line, "type", f"expected one of {', '.join(ITEM_TYPES)}, got {kind!r}")
    if kind in ("mcq_single", "mcq_multi"):
        if choices is None:
            raise fail(path, line, "choices", f"type {kind} needs choices")
        if reference is not None:
            refs = [reference] if isinstance(reference, str) else reference
            refs = [_choice_text(path, line, key, choices, r) for r in refs]
            reference = tuple(refs) if kind == "mcq_multi" else refs[0]
    elif choices is not None:
        raise fail(path, line, "choices", f"choices belong to mcq_single and mcq_multi, not {kind}")
    params = {k: row[k] for k in PARAM_KEYS if k in row and row[k] is not None}
    known = set(ITEM_KEYS) | set(extra_known)
    all_meta = {**{k: v for k, v in row.items() if k not in known}, **(meta or {})}
    return Item(id=str(raw_id), type=kind, text=text, choices=choices, answer=reference,
                checker=row.get("checker"), params=params, meta=all_meta)


def check_unique(path: Path, records: list[Recorded]) -> list[Recorded]:
    """Refuse two rows (different lines) with the same item id."""
    first: dict[str, int] = {}
    for r in records:
        seen = first.setdefault(r.item.id, r.line)
        if seen != r.line:
            raise fail(path, r.line, "id", f"{r.item.id!r} is already used by line {seen}")
    return records
