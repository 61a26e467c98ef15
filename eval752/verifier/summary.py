"""Per-loop summary: upstream's ``<provider>_summary.json`` counters, and eval752's metrics with ``num``.

``loop_summary`` builds the same keys, value types and rounding as upstream's summary file:
``success_rate`` rounded to 2 places, ``tool_calls_match_rate`` and ``scenario_check_pass_rate`` to 4,
``error_only_reasoning_rate`` unrounded, ``tool_calls_count_distribution`` keyed by the count as a string
in first-seen order. A validator's block appears only when some row carries that validator's fields, as
upstream decides. Upstream writes the blocks in set-iteration order (it varies between runs); eval752 uses
one fixed order.

The confusion matrix counts only rows labelled ``expected_tool_call`` true or false, and only rows whose
tool-call validator saw a ``stop`` or ``tool_calls`` finish land in TP/FN/FP/TN; other finish reasons of
labelled rows go to ``tool_calls_finish_others``. A labelled row that did not run the tool-call validator
stays in the denominator ``expected_tool_call_total_count`` without matching (upstream's sample has one
such row, so a perfect vendor scores 0.99 there).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from .validators import is_error_only_reasoning


def _attempts(row: Mapping[str, Any]) -> int:
    value = row.get("attempts", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _tool_calls_block(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    b: dict[str, Any] = {
        "tool_calls_finish_tool_calls": 0,  # TP: expected a call, ended in tool_calls
        "tool_calls_finish_stop": 0,  # FN: expected a call, ended in stop
        "stop_finish_tool_calls": 0,  # FP: expected no call, ended in tool_calls
        "stop_finish_stop": 0,  # TN: expected no call, ended in stop
        "tool_calls_finish_others": 0,
        "tool_calls_finish_others_detail": {},
        "expected_tool_call_total_count": 0,
        "tool_calls_schema_validation_error_count": 0,
        "tool_calls_successful_count": 0,
        "tool_calls_total_count": 0,
        "tool_calls_count_distribution": {},
    }
    for r in rows:
        finish = r.get("tool_calls_finish_reason")
        count = r.get("tool_calls_count") or 0
        expected = r.get("expected_tool_call")
        b["tool_calls_total_count"] += count
        if expected is not True and expected is not False:
            continue
        b["expected_tool_call_total_count"] += 1
        if finish == "tool_calls":
            if expected:
                b["tool_calls_finish_tool_calls"] += 1
                key = "tool_calls_successful_count" if r.get("tool_calls_valid") else "tool_calls_schema_validation_error_count"
                b[key] += 1
                dist = b["tool_calls_count_distribution"]
                dist[str(count)] = dist.get(str(count), 0) + 1
            else:
                b["stop_finish_tool_calls"] += 1
        elif finish == "stop":
            b["tool_calls_finish_stop" if expected else "stop_finish_stop"] += 1
        elif finish:
            b["tool_calls_finish_others"] += 1
            detail = b["tool_calls_finish_others_detail"]
            detail[finish] = detail.get(finish, 0) + 1
    return b


def _checked_block(rows: list[Mapping[str, Any]], prefix: str, valid_key: str) -> dict[str, Any]:
    checked = valid = 0
    for r in rows:
        if r.get(f"{prefix}_checked"):
            checked += 1
            valid += bool(r.get(valid_key))
    return {
        f"{prefix}_checked_count": checked,
        f"{prefix}_valid_count": valid,
        f"{prefix}_invalid_count": checked - valid,
    }


def loop_summary(rows: Iterable[Mapping[str, Any]], *, model: str = "", all_count: int | None = None) -> dict[str, Any]:
    """Upstream's per-loop summary of scored result rows. ``all_count`` counts request attempts including
    retries; by default the sum of the rows' ``attempts`` (1 for a row without it)."""
    rows = list(rows)
    success = sum(1 for r in rows if r.get("status") == "success")
    out: dict[str, Any] = {
        "model": model,
        "success_count": success,
        "failure_count": len(rows) - success,
        "all_count": sum(_attempts(r) for r in rows) if all_count is None else all_count,
    }
    if any("language_following_checked" in r for r in rows):
        out.update(_checked_block(rows, "language_following", "language_following_valid"))
    if any("scenario_check_checked" in r for r in rows):
        block = _checked_block(rows, "scenario_check", "scenario_check_valid")
        out.update(block)
        if block["scenario_check_checked_count"]:
            out["scenario_check_pass_rate"] = round(
                block["scenario_check_valid_count"] / block["scenario_check_checked_count"], 4
            )
    tool_block = any("tool_calls_finish_reason" in r for r in rows)
    if tool_block:
        out.update(_tool_calls_block(rows))
    if any("error_repeating_checked" in r for r in rows):
        out.update(_checked_block(rows, "error_repeating", "error_repeating_valid"))
        config = next((r["error_repeating_config"] for r in rows if r.get("error_repeating_config")), None)
        if config is not None:
            out["error_repeating_config"] = dict(config)
    errors = sum(
        1
        for r in rows
        if (is_error_only_reasoning(r.get("response")) if "response" in r else bool(r.get("error_only_reasoning")))
    )
    out["error_only_reasoning_checked_count"] = len(rows)
    out["error_only_reasoning_count"] = errors
    out["error_only_reasoning_rate"] = errors / len(rows) if rows else 0.0
    out["success_rate"] = round(success / out["all_count"], 2) if out["all_count"] > 0 else 0.0
    if tool_block:
        matched = out["tool_calls_finish_tool_calls"] + out["stop_finish_stop"]
        den = out["expected_tool_call_total_count"] or out["success_count"]
        out["tool_calls_match_rate"] = round(matched / den, 4) if den > 0 else 0.0
    return out


def _metric(value_num: int, den: int) -> dict[str, Any]:
    return {"value": value_num / den if den else None, "num": den}


def summary_metrics(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """eval752's metrics of one loop, each ``{"value", "num"}`` with its own denominator; ``value`` is
    None when nothing was checked (``num`` 0), never a made-up 0 or 1."""
    g = summary.get
    tp, tn = g("tool_calls_finish_tool_calls", 0), g("stop_finish_stop", 0)
    return {
        "query_success_rate": _metric(g("success_count", 0), g("all_count", 0)),
        "tool_calls_match_rate": _metric(tp + tn, g("expected_tool_call_total_count", 0)),
        "schema_accuracy": _metric(g("tool_calls_successful_count", 0), tp),
        "error_only_reasoning_rate": _metric(g("error_only_reasoning_count", 0), g("error_only_reasoning_checked_count", 0)),
        "language_following_success_rate": _metric(
            g("language_following_valid_count", 0), g("language_following_checked_count", 0)
        ),
        "repeat_ngram_pass_rate": _metric(g("error_repeating_valid_count", 0), g("error_repeating_checked_count", 0)),
        "scenario_check_pass_rate": _metric(g("scenario_check_valid_count", 0), g("scenario_check_checked_count", 0)),
    }


def build_batch_report(
    summary: Mapping[str, Any],
    *,
    provider: str,
    test_file: str,
    output_file: str,
    summary_file: str,
    completed_at: str,
    generated_at: str,
    status: str = "success",
) -> dict[str, Any]:
    """Upstream's per-loop ``batch_report.json`` for one provider."""
    ok = status == "success"
    return {
        "test_file": test_file,
        "total_providers": 1,
        "successful_providers": int(ok),
        "failed_providers": int(not ok),
        "provider_results": [
            {
                "provider": provider,
                "status": status,
                "summary": dict(summary),
                "output_file": output_file,
                "summary_file": summary_file,
                "completed_at": completed_at,
            }
        ],
        "generated_at": generated_at,
    }
