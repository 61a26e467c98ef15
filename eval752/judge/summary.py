"""Judge metrics for ``summary.json`` (called by ``metrics.summarise`` on the successful rows).

* ``judge_score``: the mean score of the rows the judge could read; ``num`` counts them. Unparseable
  outputs, failed judge requests and rows skipped by ``judge.trial`` are excluded and counted beside it
  (``unparseable``, ``judge_errors``, ``trial_skipped``), with the judge's own traffic (``judge_calls``,
  ``judge_requests_sent``, ``judge_cached``).
* ``judge_unparseable``: the unparseable share of judged rows (``count``: how many).
* ``pairwise_inconsistent``: for pairwise rows, the share whose swapped orders disagreed, with the
  outcome counts ``wins``, ``ties``, ``losses``.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping


def _judge(row: Mapping[str, Any]) -> dict[str, Any] | None:
    details = (row.get("verdict") or {}).get("details") or {}
    judge = details.get("judge")
    return judge if isinstance(judge, dict) else None


def judge_metrics(ok_rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    from ..metrics import metric, score_metric, wilson

    rows = [(r, j) for r in ok_rows if (j := _judge(r)) is not None]
    if not rows:
        return {}
    skipped = [r for r, j in rows if j.get("skipped")]
    judged = [(r, j) for r, j in rows if not j.get("skipped")]
    errors = [r for r, j in judged if j.get("error")]
    unparseable = [r for r, j in judged if not j.get("error") and r["verdict"]["details"].get("unparseable")]
    readable = [(r, j) for r, j in judged if not j.get("error") and not r["verdict"]["details"].get("unparseable")]
    traffic = {
        "judge_calls": sum(int(j.get("calls") or 0) for _, j in rows),
        "judge_requests_sent": sum(int(j.get("requests_sent") or 0) for _, j in rows),
        "judge_cached": sum(int(j.get("cached") or 0) for _, j in rows),
    }
    out: dict[str, Any] = {
        "judge_score": score_metric([float(r["verdict"]["score"]) for r, _ in readable]) | {
            "unparseable": len(unparseable), "judge_errors": len(errors), "trial_skipped": len(skipped),
            "excluded": "unparseable, failed and trial-skipped judgements", **traffic},
    }
    n = len(judged) - len(errors)
    out["judge_unparseable"] = metric(round(len(unparseable) / n, 6) if n else None, n,
                                      wilson(len(unparseable), n), count=len(unparseable))
    pairs = [j for _, j in readable if j.get("outcome")]
    if pairs:
        bad = sum(1 for j in pairs if j.get("inconsistent"))
        outcomes = [j["outcome"] for j in pairs]
        out["pairwise_inconsistent"] = metric(round(bad / len(pairs), 6), len(pairs), wilson(bad, len(pairs)),
                                              count=bad, wins=outcomes.count("win"), ties=outcomes.count("tie"),
                                              losses=outcomes.count("loss"))
    return out
