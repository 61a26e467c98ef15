"""The native item format: one JSON object per line, checked field by field into an ``Item``.

```
{"id": "q1", "type": "mcq_single", "inputs": {"text": "2+2?", "images": ["fig/q1.png"]},
 "choices": ["3", "4"], "answer": "4", "checker": "choice", "criteria": "...",
 "params": {"temperature": 0}, "meta": {"source": "..."}}
```

Decisions (each is checked by tests/test_datasets.py):

* ``choices`` belongs to the two MCQ types only; on any other type it is an error, not silently ignored.
* ``answer`` for ``freeform`` and ``code`` is a reference string. A JSON number is accepted and stored as
  Python's ``str()`` of it (``18`` -> ``"18"``, ``2.50`` -> ``"2.5"``); write a string when the exact spelling
  matters. The reference may be left out only when the item names a ``checker`` or ``criteria`` (a judge
  or test-based checker needs no reference). Booleans are refused.
* ``answer`` for ``judge_pairwise`` is optional and may be any JSON value; it is kept as written.
* ``answer`` for ``mcq_multi`` keeps the order written and is stored as a tuple (``to_json`` gives a list).
* ``checker`` names are not checked here against the checker registry: the runner resolves them, so
  datasets load without importing every checker.
* ``meta`` and ``criteria`` are kept exactly as parsed.
"""
from __future__ import annotations

from typing import Any

from ..registry import unknown_name_message
from ..types import ITEM_TYPES, Item
from .jsonl import json_type

FIELDS = ("id", "type", "inputs", "choices", "answer", "checker", "criteria", "params", "meta")
INPUT_FIELDS = ("text", "images", "audio", "video")
MEDIA_KINDS = ("images", "audio", "video")
PARAM_FIELDS = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop")
MCQ_TYPES = ("mcq_single", "mcq_multi")

Problem = tuple[str, str]  # (field path, what is wrong)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _nonempty_string(value: Any, field: str, problems: list[Problem]) -> bool:
    if not isinstance(value, str):
        problems.append((field, f"expected a non-empty string, got {json_type(value)}"))
        return False
    if not value.strip():
        problems.append((field, "must not be empty"))
        return False
    return True


def _check_inputs(inputs: Any, problems: list[Problem]) -> dict[str, Any]:
    """Return {"text": ..., "images": (...), ...} with whatever parts are valid."""
    out: dict[str, Any] = {}
    if not isinstance(inputs, dict):
        problems.append(("inputs", f"expected an object, got {json_type(inputs)}"))
        return out
    for key in inputs:
        if key not in INPUT_FIELDS:
            problems.append((f"inputs.{key}", unknown_name_message("input", key, sorted(INPUT_FIELDS))))
    if "text" not in inputs:
        problems.append(("inputs.text", "required field is missing"))
    elif _nonempty_string(inputs["text"], "inputs.text", problems):
        out["text"] = inputs["text"]
    for kind in MEDIA_KINDS:
        if kind not in inputs:
            continue
        paths = inputs[kind]
        if not isinstance(paths, list):
            problems.append((f"inputs.{kind}", f"expected a list of paths under assets/, got {json_type(paths)}"))
            continue
        good = [_nonempty_string(p, f"inputs.{kind}[{i}]", problems) for i, p in enumerate(paths)]
        if all(good):
            out[kind] = tuple(paths)
    return out


def _check_choices(choices: Any, problems: list[Problem]) -> tuple[str, ...] | None:
    if not isinstance(choices, list):
        problems.append(("choices", f"expected a list of strings, got {json_type(choices)}"))
        return None
    ok = True
    first_at: dict[str, int] = {}
    for i, choice in enumerate(choices):
        if not _nonempty_string(choice, f"choices[{i}]", problems):
            ok = False
        elif choice in first_at:
            problems.append((f"choices[{i}]", f"duplicate choice {choice!r} (same as choices[{first_at[choice]}])"))
            ok = False
        else:
            first_at[choice] = i
    if len(choices) < 2:
        problems.append(("choices", f"expected at least 2 choices, got {len(choices)}"))
        ok = False
    return tuple(choices) if ok else None


def _check_answer(obj: dict[str, Any], type_: str, choices: tuple[str, ...] | None, problems: list[Problem]) -> Any:
    has = "answer" in obj
    answer = obj.get("answer")
    if type_ == "judge_pairwise":
        return answer
    if type_ in ("freeform", "code"):
        if not has:
            if "checker" not in obj and "criteria" not in obj:
                problems.append(("answer", "required field is missing (or name a checker or criteria)"))
            return None
        if _is_number(answer):
            return str(answer)
        if not isinstance(answer, str):
            problems.append(("answer", f"expected a reference string, got {json_type(answer)}"))
            return None
        return answer
    if not has:
        problems.append(("answer", "required field is missing"))
        return None
    if type_ == "mcq_single":
        if not isinstance(answer, str):
            problems.append(("answer", f"expected one of the choices (a string), got {json_type(answer)}"))
        elif choices is not None and answer not in choices:
            problems.append(("answer", f"{answer!r} is not one of the choices"))
        return answer
    # mcq_multi
    if not isinstance(answer, list) or not answer:
        got = "an empty list" if answer == [] else json_type(answer)
        problems.append(("answer", f"expected a non-empty list of choices, got {got}"))
        return None
    first_at: dict[str, int] = {}
    for i, a in enumerate(answer):
        if not isinstance(a, str):
            problems.append((f"answer[{i}]", f"expected one of the choices (a string), got {json_type(a)}"))
        elif a in first_at:
            problems.append((f"answer[{i}]", f"duplicate answer {a!r} (same as answer[{first_at[a]}])"))
        else:
            first_at[a] = i
            if choices is not None and a not in choices:
                problems.append((f"answer[{i}]", f"{a!r} is not one of the choices"))
    return tuple(answer)


def _check_params(params: Any, problems: list[Problem]) -> dict[str, Any]:
    if not isinstance(params, dict):
        problems.append(("params", f"expected an object, got {json_type(params)}"))
        return {}
    for key, v in params.items():
        field = f"params.{key}"
        if key not in PARAM_FIELDS:
            problems.append((field, unknown_name_message("generation parameter", key, sorted(PARAM_FIELDS))))
        elif key == "temperature" and not (_is_number(v) and v >= 0):
            problems.append((field, f"expected a number >= 0, got {v!r}"))
        elif key == "top_p" and not (_is_number(v) and 0 < v <= 1):
            problems.append((field, f"expected a number in (0, 1], got {v!r}"))
        elif key == "top_k" and not (_is_int(v) and v >= 0):
            problems.append((field, f"expected an integer >= 0, got {v!r}"))
        elif key == "max_tokens" and not (_is_int(v) and v >= 1):
            problems.append((field, f"expected an integer >= 1, got {v!r}"))
        elif key == "seed" and not _is_int(v):
            problems.append((field, f"expected an integer, got {v!r}"))
        elif key == "stop" and not (
            isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) for s in v))
        ):
            problems.append((field, f"expected a string or a list of strings, got {json_type(v)}"))
    return dict(params)


def parse_item(obj: Any, section: str) -> tuple[Item | None, list[Problem]]:
    """Check one parsed line. Returns the Item (None when anything is wrong) and every problem found."""
    problems: list[Problem] = []
    if not isinstance(obj, dict):
        return None, [("-", f"expected a JSON object, got {json_type(obj)}")]
    for key in obj:
        if key not in FIELDS:
            problems.append((key, unknown_name_message("field", key, sorted(FIELDS))))
    for key in ("id", "type", "inputs"):
        if key not in obj:
            problems.append((key, "required field is missing"))
    if "id" in obj:
        _nonempty_string(obj["id"], "id", problems)
    type_ = obj.get("type")
    if "type" in obj:
        if not isinstance(type_, str):
            problems.append(("type", f"expected a string, got {json_type(type_)}"))
            type_ = None
        elif type_ not in ITEM_TYPES:
            problems.append(("type", unknown_name_message("item type", type_, list(ITEM_TYPES))))
            type_ = None
    inputs = _check_inputs(obj["inputs"], problems) if "inputs" in obj else {}

    choices = None
    if type_ in MCQ_TYPES:
        if "choices" not in obj:
            problems.append(("choices", "required field is missing"))
        else:
            choices = _check_choices(obj["choices"], problems)
    elif type_ is not None and "choices" in obj:
        problems.append(("choices", "only mcq_single and mcq_multi items have choices"))
    # Check the answer against the choices that are strings, even when other choices are malformed.
    listed = choices
    if listed is None and isinstance(obj.get("choices"), list):
        listed = tuple(c for c in obj["choices"] if isinstance(c, str))
    answer = _check_answer(obj, type_, listed, problems) if type_ is not None else None

    checker = obj.get("checker")
    if "checker" in obj:
        if isinstance(checker, dict):
            if not isinstance(checker.get("kind"), str) or not checker["kind"].strip():
                problems.append(("checker.kind", "expected a non-empty string naming the checker"))
        else:
            _nonempty_string(checker, "checker", problems)
    criteria = obj.get("criteria")
    if "criteria" in obj and not isinstance(criteria, (str, list, dict)):
        problems.append(("criteria", f"expected a string, list or object, got {json_type(criteria)}"))
    params = _check_params(obj["params"], problems) if "params" in obj else {}
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        problems.append(("meta", f"expected an object, got {json_type(meta)}"))

    if problems:
        return None, problems
    item = Item(
        id=obj["id"],
        type=type_,
        text=inputs["text"],
        section=section,
        images=inputs.get("images", ()),
        audio=inputs.get("audio", ()),
        video=inputs.get("video", ()),
        choices=choices,
        answer=answer,
        checker=checker,
        criteria=criteria,
        params=params,
        meta=meta,
    )
    return item, []
