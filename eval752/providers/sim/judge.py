"""The judge hook: how the simulated model behaves when it is asked to judge.

Two kinds of prompt are recognised. A *pairwise* prompt mentions ``[[A]]`` and ``[[B]]`` (and ``[[C]]``
when a tie is allowed); the reply is ``[[A]]``, ``[[B]]`` or ``[[C]]``. A *rating* prompt mentions
``[[rating]]``; the reply is ``Rating: [[N]]`` with N in 1..10. Items of type ``judge_pairwise`` in the
answer key are answered right (their ``answer``: A, B, C or tie) or wrong like any other item.

This is a deliberately small first version, to be replaced by a fuller judge model (position bias,
verbosity bias, ratings that track the judged answer's correctness); keep the name ``judge`` and the
``after`` signature so the pipeline stays as it is.
"""
from __future__ import annotations

from .behaviours import Behaviour, register
from .context import Draft, RequestContext


def judge_kind(prompt: str) -> str | None:
    if "[[A]]" in prompt and "[[B]]" in prompt:
        return "pairwise"
    if "[[rating]]" in prompt.lower():
        return "rating"
    return None


def _verdict_letter(answer: object) -> str | None:
    if answer is None:
        return None
    v = str(answer).strip().strip("[]").strip().upper()
    if v in ("TIE", "C", "EQUAL"):
        return "C"
    return v if v in ("A", "B") else None


@register
class JudgeBehaviour(Behaviour):
    name = "judge"

    def after(self, ctx: RequestContext, draft: Draft) -> Draft:
        prompt = ctx.prompt
        kind = judge_kind(prompt)
        entry = ctx.entry
        is_item = entry is not None and entry.get("type") == "judge_pairwise"
        if kind is None and not is_item:
            return draft
        if kind == "rating":
            n = 1 + int(ctx.draw("rating", draft.index) * 10)
            draft.content = f"Rating: [[{n}]]"
            return draft
        options = ["A", "B", "C"] if "[[C]]" in prompt else ["A", "B"]
        right = _verdict_letter(entry.get("answer")) if is_item else None
        if right is not None:
            if right not in options:
                options.append(right)
            if draft.correct:
                pick = right
            else:
                others = [o for o in options if o != right]
                pick = others[int(ctx.draw("wrong", draft.index) * len(others))]
        else:
            pick = options[int(ctx.draw("verdict", draft.index) * len(options))]
        draft.content = f"After comparing both responses, my verdict is: [[{pick}]]"
        return draft
