"""Two entrances to one scoring path: live responses (``score_rows``) and recorded upstream result files
(``rescore_results``). Both produce upstream-shaped result rows and feed ``loop_summary``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputFormatError
from ..types import Response
from .rows import (
    CHECK_LANGUAGE,
    CHECK_REPEAT,
    CHECK_SCENARIO,
    CHECK_TOOL_CALLS,
    PromptRow,
    load_prompt_rows,
    load_result_rows,
    prompt_row_to_request,
)
from .summary import loop_summary
from .responses import first_choice, response_to_chat_completion
from .validators import RowToCheck, validate_rows

# Fields a result row carries when that validator ran: how a recorded row tells which checks it had.
_FIELD_OF_CHECK = {
    CHECK_TOOL_CALLS: "tool_calls_finish_reason",
    CHECK_LANGUAGE: "language_following_checked",
    CHECK_REPEAT: "error_repeating_checked",
    CHECK_SCENARIO: "scenario_check_checked",
}
_VALIDATOR_FIELDS = (
    "error_only_reasoning_checked", "error_only_reasoning",
    "tool_calls_finish_reason", "tool_calls_valid", "tool_calls_count", "tool_calls_reason",
    "language_following_checked", "language_following_valid",
    "error_repeating_checked", "error_repeating", "error_repeating_valid", "error_repeating_config",
    "scenario_check_checked", "scenario_check_valid", "scenario_check_detail",
)  # fmt: skip


def _status_and_body(response: Response | Mapping[str, Any] | None) -> tuple[str, dict[str, Any], int]:
    if response is None:
        return "failed", {"error": "no response"}, 1
    if isinstance(response, Response):
        status, body = response_to_chat_completion(response)
        return status, body, max(1, response.attempts)
    body = dict(response)
    status = "success" if isinstance(body.get("choices"), list) and "error" not in body else "failed"
    return status, body, 1


def score_rows(
    prompt_rows: Sequence[PromptRow],
    responses: Sequence[Response | Mapping[str, Any] | None],
    *,
    n: int = 3,
    threshold: int = 4,
    model: str | None = None,
    backend: str = "auto",
) -> list[dict[str, Any]]:
    """Upstream-shaped result rows for prompts and their responses (same order and length). A response is
    a chat-completion dict, an eval752 ``Response`` (its ``attempts`` count toward ``all_count``), or None
    for a request that never succeeded."""
    if len(prompt_rows) != len(responses):
        raise ValueError(f"{len(prompt_rows)} prompt rows but {len(responses)} responses")
    out: list[dict[str, Any]] = []
    checks: list[RowToCheck] = []
    for prow, resp in zip(prompt_rows, responses):
        status, body, attempts = _status_and_body(resp)
        request = prompt_row_to_request(prow, model=model)
        choice = first_choice(body)
        out.append(
            {
                "data_index": prow.data_index,
                "request": request,
                "response": body,
                "status": status,
                "finish_reason": choice.get("finish_reason") if choice else None,
                "expected_tool_call": prow.expected_tool_call,
                "attempts": attempts,
            }
        )
        checks.append(RowToCheck(request, body, status, prow.validators()))
    for row, fields in zip(out, validate_rows(checks, n=n, threshold=threshold, backend=backend)):
        row.update(fields)
    return out


def _checks_from_fields(row: Mapping[str, Any]) -> tuple[str, ...]:
    found = tuple(check for check, key in _FIELD_OF_CHECK.items() if key in row)
    return found or (CHECK_TOOL_CALLS,)


def rescore_results(
    results_path: str | Path,
    prompts_path: str | Path | None = None,
    *,
    n: int = 3,
    threshold: int = 4,
    model: str | None = None,
    backend: str = "auto",
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score a recorded upstream ``*_results.jsonl`` again without calling anything.

    With the prompt file, each row's checks, label and (when the row lacks one) request come from the
    prompt line with its ``data_index``; without it, checks are read off the validator fields the row
    carries (none: ``tool_calls``) and the label off the row. Rows without a ``response`` (trimmed
    baselines) keep their recorded validator fields. Rows come back sorted by ``data_index``."""
    results_path = Path(results_path)
    rows = sorted(load_result_rows(results_path), key=lambda r: r["data_index"])
    prompts: dict[int, PromptRow] = {}
    if prompts_path is not None:
        prompts = {p.data_index: p for p in load_prompt_rows(prompts_path)}
        unknown = [r["data_index"] for r in rows if r["data_index"] not in prompts]
        if unknown:
            raise InputFormatError(
                f"{results_path}: data_index: {len(unknown)} rows have no line in {prompts_path} "
                f"(first: {unknown[:5]})"
            )
    out: list[dict[str, Any]] = []
    checks: list[RowToCheck] = []
    positions: list[int] = []
    for row in rows:
        row = dict(row)
        prow = prompts.get(row["data_index"])
        if prow is not None:
            row["expected_tool_call"] = prow.expected_tool_call
            if not isinstance(row.get("request"), dict):
                row["request"] = prompt_row_to_request(prow)
        if not isinstance(row.get("response"), dict):
            out.append(row)  # trimmed: nothing to rescore
            continue
        response = row["response"]
        if row.get("status") is None:
            row["status"] = "success" if isinstance(response.get("choices"), list) else "failed"
        choice = first_choice(response)
        row["finish_reason"] = choice.get("finish_reason") if choice else None
        wanted = prow.validators() if prow is not None else _checks_from_fields(row)
        for key in _VALIDATOR_FIELDS:
            row.pop(key, None)
        checks.append(RowToCheck(row.get("request") or {}, response, row["status"], wanted))
        positions.append(len(out))
        out.append(row)
    for pos, fields in zip(positions, validate_rows(checks, n=n, threshold=threshold, backend=backend)):
        out[pos].update(fields)
    if model is None:
        model = next((r["request"].get("model") for r in out if isinstance(r.get("request"), dict) and r["request"].get("model")), "")
    return out, loop_summary(out, model=model or "")


def load_loop_summaries(model_dir: str | Path) -> list[tuple[Path, dict[str, Any]]]:
    """``(path, summary)`` for every ``loop_*/*/*_summary.json`` under an upstream model folder, in path
    order (the order upstream's batch script reads them)."""
    model_dir = Path(model_dir)
    found = sorted(model_dir.glob("loop_*/*/*_summary.json"), key=lambda p: str(p))
    out = []
    for path in found:
        try:
            out.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"{path}:{exc.lineno}: (file): not valid JSON ({exc.msg})") from None
    return out


def write_json(value: Any, path: str | Path) -> None:
    """Write as upstream does: 4-space indent, non-ASCII kept."""
    Path(path).write_text(json.dumps(value, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
