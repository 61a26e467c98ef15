"""The checker interface and its registry.

A checker turns an item and a response into a ``Verdict``. Checkers that must call a model (LLM judges)
override ``acheck``; the runner always awaits ``acheck``, whose default calls ``check``.
"""
from __future__ import annotations

from typing import Any

from ..registry import Registry
from ..types import Item, Response, Verdict


class Checker:
    name: str = "checker"

    def check(self, item: Item, response: Response) -> Verdict:
        raise NotImplementedError

    async def acheck(self, item: Item, response: Response) -> Verdict:
        return self.check(item, response)


CHECKERS: Registry[Checker] = Registry("checker")

# The checker each item type gets when neither the item nor the config names one.
DEFAULT_CHECKER_FOR_TYPE: dict[str, str] = {
    "mcq_single": "choice",
    "mcq_multi": "choice_set",
    "freeform": "exact",
    "code": "code",
    "judge_pairwise": "pairwise_judge",
}


def checker_spec(value: Any) -> tuple[str, dict[str, Any]]:
    """Normalise ``"numeric"`` or ``{"kind": "numeric", "tolerance": 0.01}`` to ``(kind, options)``."""
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        opts = {k: v for k, v in value.items() if k != "kind"}
        return value["kind"], opts
    raise ValueError(f"a checker is a name or a mapping with 'kind', not {value!r}")
