"""The "pairwise_judge" checker (default for ``judge_pairwise`` items): an LLM judge compares two responses
to the item's question, with position-swap debiasing.

Where the two responses come from:

* ``meta.response_a`` and ``meta.response_b``: the pair is recorded in the item (the live response of the
  model under test is not judged); the score is the preference for ``response_a``.
* otherwise ``meta.baseline``: the live response of the model under test against the baseline's answer;
  the score is the preference for the model under test.
* neither: the row is not judged (``answered=False``, reason says what is missing).

Call the first of the pair the *candidate*. The judge sees (candidate=A, other=B) and, with
``judge.swap`` (default), (other=A, candidate=B). Both orders agreeing gives the verdict; any disagreement
is a tie marked inconsistent (``eval752.arena.combine_swapped``). Score: candidate win 1, tie 0.5, loss 0;
``passed`` means a win. ``details`` holds both raw judgements (``orders.ab``, ``orders.ba``: input,
output, verdict), ``outcome`` (win/tie/loss), ``consistent`` and ``inconsistent``. If either output is
unparseable the row is unparseable (``details.unparseable``), excluded from ``judge_score`` and counted.
"""
from __future__ import annotations

import asyncio
from typing import Any

from ..arena import combine_swapped
from ..errors import ConfigError
from ..types import Item, Response, Verdict
from .base import CHECKERS
from .judge import JudgeCheckerBase

_OUTCOME = {1.0: "loss", 1.5: "tie", 2.0: "win"}


def pair_of(item: Item, response: Response) -> tuple[str, str, str] | None:
    """``(candidate, other, source)`` for an item, or None when it names no pair (see module docstring)."""
    meta = item.meta or {}
    if meta.get("response_a") is not None and meta.get("response_b") is not None:
        return str(meta["response_a"]), str(meta["response_b"]), "meta.response_a vs meta.response_b"
    if meta.get("baseline") is not None:
        return response.text or "", str(meta["baseline"]), "model response vs meta.baseline"
    return None


@CHECKERS.register("pairwise_judge")
class PairwiseJudgeChecker(JudgeCheckerBase):
    name = "pairwise_judge"
    pairwise = True

    def check(self, item: Item, response: Response) -> Verdict:
        raise ConfigError("the pairwise_judge checker calls a model: use acheck")

    async def _one(self, item: Item, response: Response, messages_for: Any, first: str, second: str,
                   label: str) -> tuple[dict[str, Any], Response]:
        from ..judge.templates import context

        variables = context(item=item, response=response.text or "", reasoning=response.reasoning,
                            messages=messages_for, response_a=first, response_b=second)
        messages = self.spec.messages(variables)
        out = await self.client.complete(messages, tag=f"judge:{item.id}:{label}")
        return {"input": messages, "output": out.text, "cached": bool(out.cached), "attempts": out.attempts,
                "error": out.error}, out

    async def acheck(self, item: Item, response: Response) -> Verdict:
        self._ready()
        pair = pair_of(item, response)
        if pair is None:
            return Verdict(0.0, False, "judge_pairwise item needs meta.response_a and meta.response_b, "
                           "or meta.baseline", None, answered=False, details={"no_pair": True})
        admitted, number = self.trial.admit()
        if not admitted:
            return self.skipped()
        spec = self.spec
        candidate, other = (spec.steps.prepare(t) for t in pair[:2])
        msgs = self.model_messages(item)
        calls = [self._one(item, response, msgs, candidate, other, "ab")]
        if spec.swap:
            calls.append(self._one(item, response, msgs, other, candidate, "ba"))
        results = await asyncio.gather(*calls)
        judge = {**self.base_details(), "source": pair[2]}
        orders: dict[str, dict[str, Any]] = {}
        for label, (record, out) in zip(("ab", "ba"), results):
            self.count(judge, out)
            parsed = spec.steps.parse(out.text) if out.ok else None
            record["verdict"] = parsed.value if parsed is not None else None
            record["parse"] = parsed.why if parsed is not None else "request failed"
            orders[label] = record
        judge["orders"] = orders
        if number:
            self.trial.show(number, item.id, [(f" ({k})", r["input"], r["output"] if r["error"] is None else
                                               f"(request failed: {r['error']})", r["parse"])
                                              for k, r in orders.items()])
        failed = [k for k, r in orders.items() if r["error"] is not None]
        if failed:
            judge["error"] = "; ".join(f"{k}: {orders[k]['error']}" for k in failed)
            return Verdict(0.0, False, f"judge request failed: {judge['error']}"[:300], None, answered=False,
                           details={"judge": judge})
        bad = [k for k, r in orders.items() if r["verdict"] is None]
        if bad:
            why = "; ".join(f"{k}: {orders[k]['parse']}" for k in bad)
            return Verdict(0.0, False, f"unparseable judge output ({why})", None, answered=False,
                           details={"judge": judge, "unparseable": True})
        ab = orders["ab"]["verdict"]
        if spec.swap:
            # arena convention: the first argument is judged with the reference in position A.
            preference, consistent = combine_swapped(orders["ba"]["verdict"], ab)
        else:
            preference, consistent = combine_swapped({"A": "B", "B": "A"}.get(ab, ab), ab)
        outcome = _OUTCOME[preference]
        score = preference - 1.0
        judge.update(outcome=outcome, consistent=consistent, inconsistent=not consistent)
        verdicts = "/".join(str(orders[k]["verdict"]) for k in orders)
        reason = f"candidate {outcome}" + ("" if consistent else " (inconsistent across swapped orders)") + \
            f"; judge {verdicts}"
        return Verdict(score, outcome == "win", reason, outcome, details={"judge": judge,
                                                                          "consistent": consistent,
                                                                          "inconsistent": not consistent})
