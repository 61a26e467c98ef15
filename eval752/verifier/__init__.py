"""Vendor verifier: does a third-party deployment of a model behave like the official one?

Semantics follow MiniMax-Provider-Verifier (upstream); where evalscope's port differs, upstream wins.
Differences from upstream are deliberate and listed in ``eval752/verifier/README.md``.

Modules: ``rows`` (prompt and result files), ``validators`` (per-row checks), ``responses`` (chat-completion access), ``textscan``
(batch text scans, numba kernels when available), ``summary`` (per-loop counters), ``aggregate`` (loops, trigger
similarity, verdicts, ``metrics_report.json``), ``scoring`` (live and recorded entrances), ``k2`` (the
MoonshotAI K2-Vendor-Verifier flavour: its result and summary shapes, metrics and comparison).
"""
from .aggregate import (
    DEFAULT_THRESHOLDS,
    Threshold,
    aggregate_loops,
    build_metrics_report,
    count_distribution_cosine,
    loop_metrics,
    trigger_similarity,
    upstream_loop_metrics,
)
from .rows import (
    KNOWN_CHECKS,
    PromptRow,
    load_prompt_rows,
    load_result_rows,
    pair_by_data_index,
    parse_prompt_row,
    prompt_row_to_request,
)
from .k2 import (
    K2_DEFAULT_THRESHOLDS,
    compare_k2,
    k2_aggregate,
    k2_request,
    k2_summary,
    k2_trigger_similarity,
    k2_validate_tool_call,
    load_k2_baseline,
    load_k2_results,
    load_k2_summary,
    rescore_k2_results,
)
from .responses import response_to_chat_completion
from .scoring import load_loop_summaries, rescore_results, score_rows, write_json
from .summary import build_batch_report, loop_summary, summary_metrics
from .validators import RowToCheck, is_valid_array_command, validate_rows, validate_tool_call

__all__ = [
    "DEFAULT_THRESHOLDS",
    "K2_DEFAULT_THRESHOLDS",
    "KNOWN_CHECKS",
    "PromptRow",
    "RowToCheck",
    "Threshold",
    "aggregate_loops",
    "build_batch_report",
    "build_metrics_report",
    "compare_k2",
    "count_distribution_cosine",
    "is_valid_array_command",
    "k2_aggregate",
    "k2_request",
    "k2_summary",
    "k2_trigger_similarity",
    "k2_validate_tool_call",
    "load_k2_baseline",
    "load_k2_results",
    "load_k2_summary",
    "load_loop_summaries",
    "load_prompt_rows",
    "load_result_rows",
    "loop_metrics",
    "loop_summary",
    "pair_by_data_index",
    "parse_prompt_row",
    "prompt_row_to_request",
    "rescore_k2_results",
    "rescore_results",
    "response_to_chat_completion",
    "score_rows",
    "summary_metrics",
    "trigger_similarity",
    "upstream_loop_metrics",
    "validate_rows",
    "validate_tool_call",
    "write_json",
]
