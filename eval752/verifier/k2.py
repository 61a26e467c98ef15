"""The K2-Vendor-Verifier flavour (``verifier.flavour=k2``): MoonshotAI's tool-call checks for Kimi K2
deployments ("K2VV"), with K2VV's row, result and summary shapes and its metric definitions.

K2VV's formats (read from MoonshotAI/K2-Vendor-Verifier: ``tool_calls_eval.py``,
``src/kimi_vendor_verifier/tool_calls_eval.py``, ``src/kimi_vendor_verifier/models.py``, ``README.md``):

* **Prompt rows** (``samples.jsonl``): each line is a whole chat-completions request body (``messages``,
  optional ``tools``, and any other body fields such as ``temperature``, ``max_tokens``, ``stream``); there
  are no label fields. A message with role ``_input`` is sent as ``system``; the model is set from the
  command line. ``data_index`` is the 1-based physical line number. eval752 reads these rows with the same
  parser as the MiniMax flavour (``rows.parse_prompt_row``); K2 rows simply carry no labels.
* **Result rows** (``results.jsonl``): ``data_index, request`` (the body as sent, model included),
  ``response`` (the chat completion, or ``{"error": "..."}``), ``status`` (``success``/``failed``),
  ``finish_reason``, ``tool_calls_valid`` (true/false, or null when no call was checked), ``last_run_at``
  (ISO time), ``duration_ms``, ``hash`` (MD5 of the sent body as sorted-key JSON, non-ASCII kept). K2VV
  appends while it runs and then keeps, per ``data_index``, the row with the latest ``last_run_at``;
  :func:`load_k2_results` does the same.
* **Summary** (``summary.json``): ``model, success_count, failure_count, finish_stop, finish_tool_calls,
  finish_others, finish_others_detail, schema_validation_error_count, successful_tool_call_count``.

K2VV's metrics (README "Evaluation Metrics"), each with its denominator:

* ``count_finish_reason_tool_calls`` = rows whose finish reason is ``tool_calls`` (summary
  ``finish_tool_calls``); ``count_successful_tool_call`` = those whose calls all pass schema validation
  (``successful_tool_call_count``); ``schema_validation_error_count`` = the rest, including a
  ``tool_calls`` finish without any call.
* ``schema_accuracy`` = count_successful_tool_call / count_finish_reason_tool_calls (denominator: every
  ``tool_calls`` finish of the vendor run).
* Trigger similarity, ``tool_call_f1``: the official run is gold; TP = both rows finish with
  ``tool_calls``, FP = vendor ``tool_calls`` / official not, FN = official ``tool_calls`` / vendor not,
  TN = neither. precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2PR / (P + R) (0 when P + R = 0).
  K2VV publishes no script for this; eval752 pairs rows by ``data_index`` and lists rows on one side only.
  "Not tool_calls" includes ``stop``, every other finish and a failed request (no finish reason).
  K2VV's published acceptance: F1 >= 0.73 for kimi-k2-thinking, >= 0.80 for kimi-k2-0905.

A tool call passes schema validation when its function name matches a declared tool whose
``parameters`` is non-empty, its ``arguments`` (a JSON string or an object) decode, and they validate
against ``parameters`` with ``jsonschema`` (the schema's own draft, else the latest). A ``tool_calls``
finish with no calls leaves ``tool_calls_valid`` null and counts as a schema error (K2VV's packaged
version; its older top-level script counted it as valid). Unlike the MiniMax flavour there is no
argv-``command`` lint.
"""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import ConfigError, InputFormatError
from .aggregate import Threshold, combine_loop_metrics, mean, overall_verdict
from .responses import finish_reason_of, first_choice
from .rows import PromptRow, _iter_json_lines, _raise, load_prompt_rows, pair_by_data_index, parse_prompt_row

K2_SUMMARY_KEYS = (
    "model", "success_count", "failure_count", "finish_stop", "finish_tool_calls", "finish_others",
    "finish_others_detail", "schema_validation_error_count", "successful_tool_call_count",
)  # fmt: skip
K2_COUNT_KEYS = K2_SUMMARY_KEYS[1:6] + K2_SUMMARY_KEYS[7:]
K2_ROW_KEYS = ("data_index", "request", "response", "status", "finish_reason", "tool_calls_valid",
               "last_run_at", "duration_ms", "hash")
K2_METRIC_NAMES = ("query_success_rate", "schema_accuracy", "trigger_f1", "trigger_precision", "trigger_recall")
K2_REPORT = "k2_report.json"
K2_LOOP_SUMMARY = "summary.json"
K2_COMPARISON = "comparison.json"

# eval752's verdict rules for the K2 flavour. trigger_f1 is K2VV's published acceptance for kimi-k2-thinking
# (0.80 for kimi-k2-0905: set verifier.thresholds.trigger_f1); K2VV publishes no rule for schema accuracy or
# success, so those two are eval752's (the same as the MiniMax flavour's).
K2_DEFAULT_THRESHOLDS: dict[str, Threshold] = {
    "query_success_rate": Threshold("at_least", 1.0),
    "schema_accuracy": Threshold("at_least", 0.98),
    "trigger_f1": Threshold("at_least", 0.73),
}


# --- requests and per-row validation ----------------------------------------------------------------------


def _is_label_field(name: str) -> bool:
    """Label fields of evalscope's hosted copy of the K2VV set (``should_call_tool``, ``official_*``); K2VV's
    own rows have none. They are not sent."""
    return name == "should_call_tool" or name.startswith("official_")


def k2_request(row: PromptRow | Mapping[str, Any], model: str | None = None) -> dict[str, Any]:
    """The body K2VV sends for a prompt row: the row as it stands, role ``_input`` as ``system``, ``model``
    set when given. Unlike the MiniMax flavour nothing else changes (tool-call ids and history reasoning
    fields are sent as written). evalscope's label fields (``should_call_tool``, ``official_*``) are left
    out."""
    if not isinstance(row, PromptRow):
        row = parse_prompt_row(row, 0)
    req = copy.deepcopy({k: v for k, v in row.body.items() if not _is_label_field(k)})
    for msg in req["messages"]:
        if isinstance(msg, dict) and msg.get("role") == "_input":
            msg["role"] = "system"
    if model:
        req["model"] = model
    return req


def k2_hash(request: Mapping[str, Any]) -> str:
    """K2VV's row hash: MD5 of the sent body as JSON with sorted keys and non-ASCII kept."""
    return hashlib.md5(json.dumps(request, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def k2_validate_tool_call(call: Any, tools: Sequence[Any]) -> tuple[bool, str | None]:
    """(valid, reason) for one call under K2VV's rule (see the module docstring). A malformed tool list
    (an entry without ``function.name``) fails the call, as K2VV's lookup does."""
    from .validators import check_arguments

    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping) or "name" not in fn:
        return False, "malformed tool call: no function name"
    name = fn["name"]
    schema = None
    for tool in tools or []:
        tfn = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(tfn, Mapping) or "name" not in tfn:
            return False, "a declared tool has no function name"
        if tfn["name"] == name:
            if "parameters" not in tfn:
                return False, f"tool {name!r} has no parameters"
            schema = tfn["parameters"]
            break
    if not schema:
        return False, f"no schema for tool {name!r}"
    if "arguments" not in fn:
        return False, f"tool call {name!r} has no arguments"
    ok, reason, _ = check_arguments(name, schema, fn["arguments"])
    return ok, reason


def k2_row_fields(request: Mapping[str, Any] | None, response: Mapping[str, Any] | None) -> dict[str, Any]:
    """``finish_reason``, ``tool_calls_valid`` and eval752's ``tool_calls_reason`` for one response. The
    finish reason is read from the first choice whatever the status, as K2VV does."""
    out: dict[str, Any] = {"finish_reason": None, "tool_calls_valid": None, "tool_calls_reason": None}
    choice = first_choice(response) if isinstance(response, Mapping) else None
    if not choice:
        return out
    out["finish_reason"] = choice.get("finish_reason")
    if out["finish_reason"] != "tool_calls":
        return out
    message = choice.get("message")
    calls = message.get("tool_calls") if isinstance(message, Mapping) else None
    if not calls:
        out["tool_calls_reason"] = "finish_reason is tool_calls but the message has no tool calls"
        return out
    tools = (request or {}).get("tools") or []
    out["tool_calls_valid"] = True
    for call in calls:
        ok, reason = k2_validate_tool_call(call, tools)
        if not ok:
            out["tool_calls_valid"] = False
            out["tool_calls_reason"] = reason
            break
    return out


def k2_result_row(data_index: int, request: Mapping[str, Any], status: str, response: Mapping[str, Any],
                  *, duration_s: float = 0.0, **extra: Any) -> dict[str, Any]:
    """One K2VV-shaped result row (``K2_ROW_KEYS`` first), then eval752's extras (``tool_calls_reason``
    and whatever is passed in ``extra``: loop, attempts, latency_s, cached)."""
    fields = k2_row_fields(request, response)
    row: dict[str, Any] = {
        "data_index": data_index,
        "request": dict(request),
        "response": dict(response),
        "status": status,
        "finish_reason": fields["finish_reason"],
        "tool_calls_valid": fields["tool_calls_valid"],
        "last_run_at": datetime.now(timezone.utc).isoformat(),
        "duration_ms": int(round((duration_s or 0.0) * 1000)),
        "hash": k2_hash(request),
        "tool_calls_reason": fields["tool_calls_reason"],
    }
    row.update(extra)
    return row


# --- summary and metrics ----------------------------------------------------------------------------------


def k2_summary(rows: Sequence[Mapping[str, Any]], model: str = "") -> dict[str, Any]:
    """K2VV's ``summary.json`` for result rows: status counts, finish-reason counts (``finish_others_detail``
    in first-seen order; a row without a finish reason counts in none of them) and, over ``tool_calls``
    finishes, valid calls vs schema errors (``tool_calls_valid`` not true, null included)."""
    s: dict[str, Any] = {k: 0 for k in K2_SUMMARY_KEYS}
    s["model"] = model
    s["finish_others_detail"] = {}
    for r in rows:
        if r.get("status") == "success":
            s["success_count"] += 1
        else:
            s["failure_count"] += 1
        finish = r.get("finish_reason")
        if finish == "stop":
            s["finish_stop"] += 1
        elif finish == "tool_calls":
            s["finish_tool_calls"] += 1
            if r.get("tool_calls_valid"):
                s["successful_tool_call_count"] += 1
            else:
                s["schema_validation_error_count"] += 1
        elif finish:
            s["finish_others"] += 1
            s["finish_others_detail"][finish] = s["finish_others_detail"].get(finish, 0) + 1
    return s


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def k2_metrics(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """eval752's metrics of one K2 summary, ``{"value", "num"}`` each (``num`` is the denominator; value
    None when it is 0): ``query_success_rate`` = success_count / (success_count + failure_count) and
    ``schema_accuracy`` = successful_tool_call_count / finish_tool_calls."""
    rows = summary.get("success_count", 0) + summary.get("failure_count", 0)
    calls = summary.get("finish_tool_calls", 0)
    return {
        "query_success_rate": {"value": _ratio(summary.get("success_count", 0), rows), "num": rows},
        "schema_accuracy": {"value": _ratio(summary.get("successful_tool_call_count", 0), calls), "num": calls},
    }


def k2_table_row(summary: Mapping[str, Any], similarity: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The columns of K2VV's published table for one run: ToolCall-Trigger Similarity (``tool_call_f1``,
    None without a baseline), ``count_finish_reason_tool_calls``, ``count_successful_tool_call``,
    ``schema_accuracy`` (None when there was no tool-call finish)."""
    calls = summary.get("finish_tool_calls", 0)
    ok = summary.get("successful_tool_call_count", 0)
    return {
        "tool_call_f1": similarity["tool_call_f1"] if similarity else None,
        "tool_call_precision": similarity["tool_call_precision"] if similarity else None,
        "tool_call_recall": similarity["tool_call_recall"] if similarity else None,
        "count_finish_reason_tool_calls": calls,
        "count_successful_tool_call": ok,
        "schema_accuracy": _ratio(ok, calls),
    }


def k2_trigger_similarity(official_rows: Sequence[Mapping[str, Any]],
                          model_rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """K2VV's trigger similarity (module docstring) over rows paired by ``data_index``; also the indexes of
    the disagreements (``fp_data_indexes``: vendor called, official did not; ``fn_data_indexes``: the
    reverse) and of rows on one side only (``missing``: official only, ``extra``: vendor only)."""
    pairing = pair_by_data_index(list(official_rows), list(model_rows))
    tp = tn = 0
    fp_idx: list[int] = []
    fn_idx: list[int] = []
    for official, model in pairing.pairs:
        gold = finish_reason_of(official) == "tool_calls"
        pred = finish_reason_of(model) == "tool_calls"
        if gold and pred:
            tp += 1
        elif pred:
            fp_idx.append(int(model["data_index"]))
        elif gold:
            fn_idx.append(int(model["data_index"]))
        else:
            tn += 1
    fp, fn = len(fp_idx), len(fn_idx)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "tool_call_f1": f1, "tool_call_precision": precision, "tool_call_recall": recall,
        "tp": tp, "fp": fp, "fn": fn, "tn": tn, "samples_used": len(pairing.pairs),
        "fp_data_indexes": fp_idx, "fn_data_indexes": fn_idx,
        "missing_data_indexes": pairing.missing, "extra_data_indexes": pairing.extra,
    }  # fmt: skip


# --- reading K2VV files -----------------------------------------------------------------------------------


def load_k2_results(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows sorted by ``data_index``, notes). Each row needs an integer ``data_index``; ``request`` and
    ``response`` must be objects or null; ``status`` is ``success``/``failed`` when present. Repeated
    ``data_index`` rows (K2VV appends before it de-duplicates) keep the one with the latest ``last_run_at``
    (ISO strings compared as K2VV compares them; a later line wins a tie); each drop is noted."""
    path = Path(path)
    best: dict[int, tuple[tuple[str, int], dict[str, Any]]] = {}
    problems: list[str] = []
    dropped = 0
    for lineno, value, error in _iter_json_lines(path):
        where = f"{path}:{lineno}"
        if error:
            problems.append(f"{where}: {error}")
            continue
        if not isinstance(value, dict):
            problems.append(f"{where}: (line): expected a JSON object")
            continue
        idx = value.get("data_index")
        if isinstance(idx, bool) or not isinstance(idx, int):
            problems.append(f"{where}: data_index: required, an integer (the samples file's line number)")
            continue
        bad = False
        for name in ("request", "response"):
            if value.get(name) is not None and not isinstance(value[name], dict):
                problems.append(f"{where}: {name}: must be a JSON object or null")
                bad = True
        if value.get("status") not in (None, "success", "failed"):
            problems.append(f"{where}: status: must be 'success' or 'failed', not {value['status']!r}")
            bad = True
        if "tool_calls_valid" in value and value["tool_calls_valid"] not in (None, True, False):
            problems.append(f"{where}: tool_calls_valid: must be true, false or null")
            bad = True
        if bad:
            continue
        key = (str(value.get("last_run_at") or ""), lineno)
        if idx in best:
            dropped += 1
            if key < best[idx][0]:
                continue
        best[idx] = (key, value)
    if problems:
        _raise(problems)
    notes = [f"{path}: {dropped} repeated data_index rows dropped (the latest last_run_at is kept)"] if dropped else []
    return [best[i][1] for i in sorted(best)], notes


def load_k2_summary(path: str | Path) -> dict[str, Any]:
    """A K2VV ``summary.json``; every count key must be present (an integer), ``finish_others_detail`` an
    object. Extra keys are kept."""
    path = Path(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"{path}:{exc.lineno}: (file): not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise InputFormatError(f"{path}: (file): expected a JSON object (K2VV summary.json)")
    problems = [f"{path}: {k}: required, an integer" for k in K2_COUNT_KEYS
                if isinstance(value.get(k), bool) or not isinstance(value.get(k), int)]
    if not isinstance(value.get("finish_others_detail", {}), dict):
        problems.append(f"{path}: finish_others_detail: must be an object")
    if problems:
        _raise(problems)
    value.setdefault("finish_others_detail", {})
    return value


@dataclass
class K2Baseline:
    """One official loop: its rows (None for a summary-only baseline) and its K2VV summary."""

    name: str
    rows: list[dict[str, Any]] | None
    summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _baseline_from_file(p: Path) -> K2Baseline:
    if p.suffix == ".json":
        return K2Baseline(str(p), None, load_k2_summary(p))
    rows, notes = load_k2_results(p)
    model = next((r["request"].get("model") for r in rows if isinstance(r.get("request"), dict)
                  and r["request"].get("model")), "")
    return K2Baseline(str(p), rows, k2_summary(rows, model=model), notes)


def load_k2_baseline(path: str | Path) -> list[K2Baseline]:
    """Official K2 results, one entry per loop. A ``.jsonl`` file is a K2VV ``results.jsonl``; a ``.json``
    file a K2VV ``summary.json`` (counts only: no trigger similarity); a folder is read as an eval752 K2
    run (``loop_*/results.jsonl``), ``loop_*.jsonl`` files, ``*_results.jsonl`` files (as K2VV publishes
    ``kimi-k2-thinking_results.jsonl``), ``results.jsonl``, or ``summary.json``, first match wins."""
    p = Path(path).expanduser()
    if p.is_file():
        return [_baseline_from_file(p)]
    if not p.is_dir():
        raise ConfigError(f"verifier.baseline {str(path)!r}: no such file or folder")
    for pattern in ("loop_*/results.jsonl", "loop_*.jsonl", "*_results.jsonl", "results.jsonl", "summary.json"):
        found = sorted(p.glob(pattern), key=str)
        if found:
            return [_baseline_from_file(f) for f in found]
    raise ConfigError(f"verifier.baseline {str(path)!r}: no loop_*/results.jsonl, loop_*.jsonl, *_results.jsonl, "
                      "results.jsonl or summary.json inside")


def compare_k2(official: K2Baseline, rows: Sequence[Mapping[str, Any]] | None,
               summary: Mapping[str, Any]) -> dict[str, Any]:
    """Side by side: every K2VV count (official, vendor, vendor - official), ``finish_others_detail`` of
    both, K2VV's table columns of both, and the trigger similarity (None with a summary-only baseline or
    without vendor rows)."""
    counts = {k: {"official": official.summary.get(k, 0), "vendor": summary.get(k, 0),
                  "delta": summary.get(k, 0) - official.summary.get(k, 0)} for k in K2_COUNT_KEYS}
    sim = k2_trigger_similarity(official.rows, rows) if official.rows is not None and rows is not None else None
    return {
        "baseline": official.name,
        "official_model": official.summary.get("model", ""),
        "vendor_model": summary.get("model", ""),
        "counts": counts,
        "finish_others_detail": {"official": official.summary.get("finish_others_detail", {}),
                                 "vendor": summary.get("finish_others_detail", {})},
        "official": k2_table_row(official.summary),
        "vendor": k2_table_row(summary, sim),
        "trigger_similarity": sim,
    }


# --- offline re-scoring -----------------------------------------------------------------------------------


def rescore_k2_results(results_path: str | Path, prompts_path: str | Path | None = None, *,
                       model: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """(rows, K2VV summary, notes) for a recorded K2VV ``results.jsonl``, validated again without calling
    anything. Tools come from the prompt file's line with the row's ``data_index`` when given (a row with
    no line there is an error), else from the row's ``request``. Rows without a ``response`` object keep
    their recorded ``finish_reason`` / ``tool_calls_valid``. The summary's model is ``model``, else the
    first request's."""
    rows, notes = load_k2_results(results_path)
    prompts: dict[int, PromptRow] = {}
    if prompts_path is not None:
        prompts = {p.data_index: p for p in load_prompt_rows(prompts_path)}
        unknown = [r["data_index"] for r in rows if r["data_index"] not in prompts]
        if unknown:
            raise InputFormatError(f"{results_path}: data_index: {len(unknown)} rows have no line in "
                                   f"{prompts_path} (first: {unknown[:5]})")
    out = []
    for row in rows:
        row = dict(row)
        prow = prompts.get(row["data_index"])
        request = k2_request(prow) if prow is not None else (row.get("request") or {})
        if isinstance(row.get("response"), dict):
            if row.get("status") is None:
                row["status"] = "success" if isinstance(row["response"].get("choices"), list) else "failed"
            row.update(k2_row_fields(request, row["response"]))
        out.append(row)
    if model is None:
        model = next((r["request"].get("model") for r in out if isinstance(r.get("request"), dict)
                      and r["request"].get("model")), "")
    return out, k2_summary(out, model=model or ""), notes


# --- across loops, verdicts, the run's files ---------------------------------------------------------------


def k2_aggregate(loop_summaries: Sequence[Mapping[str, Any]],
                 similarities: Sequence[Mapping[str, Any] | None] | None = None,
                 thresholds: Mapping[str, Threshold] | None = None) -> dict[str, Any]:
    """Per metric: each loop's value, the unweighted mean over loops that have one, min, max, stdev, the
    summed denominator ``num``, and a verdict of the mean against its rule (``K2_DEFAULT_THRESHOLDS``
    updated with ``thresholds``; "n/a" with no value). Trigger metrics exist only with row baselines."""
    rules = {**K2_DEFAULT_THRESHOLDS, **(thresholds or {})}
    sims = list(similarities) if similarities is not None else [None] * len(loop_summaries)
    per_loop = []
    for summary, sim in zip(loop_summaries, sims):
        m = k2_metrics(summary)
        if sim is not None:
            n = sim["samples_used"]
            for key in ("f1", "precision", "recall"):
                m[f"trigger_{key}"] = {"value": sim[f"tool_call_{key}"] if n else None, "num": n}
        per_loop.append(m)
    names = [k for k in K2_METRIC_NAMES if any(k in m for m in per_loop)]
    metrics = combine_loop_metrics(per_loop, names, rules)
    return {"flavour": "k2", "loops": len(per_loop), "metrics": metrics, "verdict": overall_verdict(metrics)}


def _write_json(value: Any, path: Path) -> None:
    """As K2VV writes its summary: 4-space indent, non-ASCII kept."""
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


def write_k2_reports(run_dir: Path, loop_rows: Sequence[Sequence[Mapping[str, Any]]],
                     baseline: Sequence[K2Baseline] | None, thresholds: Mapping[str, Threshold] | None,
                     model: str, loop_dir_name=lambda loop: f"loop_{loop + 1:02d}") -> dict[str, Any]:
    """Write ``loop_NN/summary.json`` (K2VV's summary), ``loop_NN/comparison.json`` (with a baseline:
    :func:`compare_k2` against baseline loop ``L % len(baseline)``) and ``k2_report.json`` (K2VV's table
    columns per loop, official and vendor, and their means); return eval752's verdict block
    (:func:`k2_aggregate`) plus ``comparison`` (per loop: baseline name, trigger counts, count deltas)."""
    summaries, sims, comparisons, table = [], [], [], []
    for loop, rows in enumerate(loop_rows):
        folder = run_dir / loop_dir_name(loop)
        folder.mkdir(parents=True, exist_ok=True)
        summary = k2_summary(rows, model=model)
        _write_json(summary, folder / K2_LOOP_SUMMARY)
        summaries.append(summary)
        comparison = None
        if baseline:
            comparison = compare_k2(baseline[loop % len(baseline)], rows, summary)
            _write_json(comparison, folder / K2_COMPARISON)
        sim = comparison["trigger_similarity"] if comparison else None
        sims.append(sim)
        comparisons.append(comparison)
        table.append({"loop": loop + 1, "file": f"{loop_dir_name(loop)}/{K2_LOOP_SUMMARY}",
                      "vendor": k2_table_row(summary, sim),
                      **({"official": comparison["official"], "baseline": comparison["baseline"]}
                         if comparison else {})})
    averages: dict[str, Any] = {}
    for key in ("tool_call_f1", "count_finish_reason_tool_calls", "count_successful_tool_call", "schema_accuracy"):
        values = [t["vendor"][key] for t in table if t["vendor"][key] is not None]
        averages[key] = mean(values) if values else None
    _write_json({"model": model, "loops": len(table), "average": averages, "results": table}, run_dir / K2_REPORT)
    out = k2_aggregate(summaries, sims, thresholds)
    if baseline:
        out["comparison"] = [
            {"baseline": c["baseline"],
             "trigger": {k: c["trigger_similarity"][k] for k in ("tp", "fp", "fn", "tn", "samples_used")}
             if c["trigger_similarity"] else None,
             "count_delta": {k: v["delta"] for k, v in c["counts"].items()}}
            for c in comparisons if c is not None
        ]
    return out
