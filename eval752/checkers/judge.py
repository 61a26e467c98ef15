"""The "judge" checker: an LLM judge scores one response (see eval752/judge/ and the README's "LLM judges").

Modes (``judge.mode``, else the template's, else ``scale``):

* ``scale``: the judge rates the response ``[[N]]`` (MT-bench single-v1); score ``N / judge.scale_max``,
  passed when the score is at least 0.5.
* ``binary``: the judge answers ``[[YES]]`` or ``[[NO]]`` (or ``[[1]]``/``[[0]]``, see ``judge.steps``);
  score 1 or 0.

Output the parser cannot read gives ``answered=False`` with ``details.unparseable`` true and the raw
output kept in ``details.judge.output``; it scores 0 in ``score`` and is excluded (and counted) in the
summary's ``judge_score``. A failed judge request gives ``details.judge.error``. With ``judge.trial=K`` rows
after the first K are not judged (``details.judge.skipped``).
"""
from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..types import Item, Response, Verdict
from .base import CHECKERS, Checker


class JudgeCheckerBase(Checker):
    """What both judge checkers share: options, binding to the run's ``judge`` config, the judge client."""

    pairwise = False

    def __init__(self, **options: Any) -> None:
        from ..config import JudgeConfig
        from ..judge.spec import merge_options

        merge_options(JudgeConfig(), self.name, options)  # unknown option names fail now
        self.options = options
        self.spec: Any = None
        self.client: Any = None
        self.trial: Any = None
        self.dataset_cfg: Any = None

    def bind_run_config(self, cfg: Any) -> None:
        """Called by ``CheckerChooser`` once: resolve ``cfg.judge`` (+ options), make the judge client."""
        from ..judge.client import JudgeClient
        from ..judge.spec import Trial, merge_options, resolve

        jcfg = merge_options(cfg.judge, self.name, self.options)
        self.spec = resolve(jcfg, checker=self.name, pairwise=self.pairwise)
        self.client = JudgeClient(jcfg.provider, getattr(cfg, "cache", None))
        self.trial = Trial.shared(cfg, self.spec.trial)
        self.dataset_cfg = getattr(cfg, "dataset", None)

    def _ready(self) -> None:
        if self.spec is None:
            raise ConfigError(f"checker {self.name!r} is not bound to a run config (bind_run_config(cfg))")

    def model_messages(self, item: Item) -> list[dict[str, Any]]:
        from ..prompts import build_messages

        if self.dataset_cfg is None:
            return [{"role": "user", "content": item.text}]
        return [dict(m) for m in build_messages(item, self.dataset_cfg)]

    def base_details(self) -> dict[str, Any]:
        return {"mode": self.spec.mode, "template": self.spec.template.name, "calls": 0, "requests_sent": 0,
                "cached": 0}

    @staticmethod
    def count(judge: dict[str, Any], response: Response) -> None:
        judge["calls"] += 1
        judge["cached"] += bool(response.cached)
        judge["requests_sent"] += 0 if response.cached else 1

    def skipped(self) -> Verdict:
        judge = {**self.base_details(), "skipped": True}
        return Verdict(0.0, False, f"not judged (judge.trial={self.spec.trial})", None, answered=False,
                       details={"judge": judge})


@CHECKERS.register("judge")
class JudgeChecker(JudgeCheckerBase):
    name = "judge"

    def check(self, item: Item, response: Response) -> Verdict:
        raise ConfigError("the judge checker calls a model: use acheck")

    async def acheck(self, item: Item, response: Response) -> Verdict:
        from ..judge.client import call_record
        from ..judge.templates import context

        self._ready()
        admitted, number = self.trial.admit()
        if not admitted:
            return self.skipped()
        spec = self.spec
        judged = spec.steps.prepare(response.text)
        variables = context(item=item, response=judged, reasoning=response.reasoning,
                            messages=self.model_messages(item))
        messages = spec.messages(variables)
        out = await self.client.complete(messages, tag=f"judge:{item.id}")
        judge = {**self.base_details(), "input": messages, **call_record(out)}
        self.count(judge, out)
        if not out.ok:
            if number:
                self.trial.show(number, item.id, [("", messages, f"(request failed: {out.error})", "-")])
            return Verdict(0.0, False, f"judge request failed: {out.error}"[:300], None, answered=False,
                           details={"judge": judge})
        parsed = spec.steps.parse(out.text)
        if number:
            self.trial.show(number, item.id, [("", messages, out.text, parsed.why)])
        if not parsed.ok:
            return Verdict(0.0, False, f"unparseable judge output: {parsed.why}", None, answered=False,
                           details={"judge": judge, "unparseable": True})
        if spec.mode == "binary":
            score = 1.0 if parsed.value else 0.0
            reason = f"judge: {parsed.why}"
        else:
            score = round(parsed.value / spec.steps.scale_max, 6)
            reason = f"judge: {parsed.why} / {spec.steps.scale_max}"
        return Verdict(score, score >= 0.5, reason, parsed.value, details={"judge": judge})
