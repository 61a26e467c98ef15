"""From ``judge.*`` (plus a checker's own options) to a resolved ``JudgeSpec``; the trial switch.

A judge checker's options override the run's ``judge`` section key by key, e.g. an item's
``"checker": {"kind": "judge", "mode": "binary"}`` or ``checker.force={kind: judge, template: my.jinja}``.
Everything is checked when the checker is built (before any request): the template is loaded, compiled
and rendered once with placeholder values, so a sandbox violation or an unknown variable fails the run
up front with the template's name.
"""
from __future__ import annotations

import sys
import threading
import weakref
from dataclasses import dataclass, fields, replace
from typing import Any

from ..config import JudgeConfig
from ..errors import ConfigError
from .steps import Pipeline
from .templates import MODES, JudgeTemplate, load_prompts_file, load_template

DEFAULT_TEMPLATE = {"scale": "mtbench_single_v1", "binary": "binary", "pairwise": "mtbench_pair_v2"}
OPTION_NAMES = tuple(f.name for f in fields(JudgeConfig) if f.name != "provider")


def merge_options(base: JudgeConfig, checker: str, options: dict[str, Any]) -> JudgeConfig:
    from ..checkers._extract import reject_unknown_options

    reject_unknown_options(checker, {k: v for k, v in options.items() if k not in OPTION_NAMES}, OPTION_NAMES)
    return replace(base, **options) if options else base


@dataclass(frozen=True)
class JudgeSpec:
    template: JudgeTemplate
    mode: str
    steps: Pipeline
    system_in_user: bool
    swap: bool
    trial: int | None

    def messages(self, variables: dict[str, Any]) -> list[dict[str, str]]:
        return self.template.messages(variables, system_in_user=self.system_in_user)


def resolve(cfg: JudgeConfig, *, checker: str, pairwise: bool) -> JudgeSpec:
    if cfg.prompts_file and cfg.template:
        raise ConfigError("set judge.template or judge.prompts_file (+ judge.prompt_name), not both")
    if cfg.mode is not None and cfg.mode not in MODES:
        raise ConfigError(f"judge.mode must be one of {', '.join(MODES)}, got {cfg.mode!r}")
    if cfg.scale_max < 1:
        raise ConfigError(f"judge.scale_max must be >= 1, got {cfg.scale_max}")
    if cfg.trial is not None and cfg.trial < 0:
        raise ConfigError(f"judge.trial must be >= 0 or null, got {cfg.trial}")
    if cfg.prompts_file:
        template = load_prompts_file(cfg.prompts_file, cfg.prompt_name)
    elif cfg.template:
        template = load_template(cfg.template)
    else:
        template = None
    mode = cfg.mode or (template.mode if template else None) or ("pairwise" if pairwise else "scale")
    if pairwise and mode != "pairwise":
        raise ConfigError(f"checker {checker!r} judges pairs: judge mode must be pairwise, not {mode!r}")
    if not pairwise and mode == "pairwise":
        raise ConfigError(f"checker {checker!r} judges one response: mode pairwise needs checker pairwise_judge")
    if template is None:
        template = load_template(DEFAULT_TEMPLATE[mode])
    if cfg.system is not None:
        template = JudgeTemplate(template.name, template.source, template.mode, cfg.system or None)
    steps = Pipeline.build(cfg.preprocess, cfg.postprocess, mode, cfg.scale_max)
    spec = JudgeSpec(template, mode, steps, cfg.system_in_user, cfg.swap, cfg.trial)
    _dry_render(spec)
    return spec


class _Placeholder(dict):
    """Meta values for the dry render: any key exists."""

    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def _dry_render(spec: JudgeSpec) -> None:
    """Render once with placeholders so that sandbox refusals and syntax problems fail up front."""
    from types import SimpleNamespace

    from .templates import context

    item = SimpleNamespace(id="<item>", type="<type>", text="<question>", answer="<reference>",
                           criteria="<criteria>", meta={})
    v = context(item=item, response="<response>", reasoning="<reasoning>", messages=(),
                response_a="<response_a>" if spec.mode == "pairwise" else None, response_b="<response_b>")
    v["meta"] = _Placeholder()
    from .templates import JudgeTemplateError

    try:
        spec.messages(v)
    except JudgeTemplateError as e:
        if "is undefined" in str(e) and "unsafe" not in str(e):
            return  # a custom meta field used bare ({{ topic }}): only known per item; checked when rendered
        raise


class Trial:
    """``judge.trial=K``: judge the first K rows that arrive, print each judge input and output to stderr.
    All judge checkers of one run share one counter (``shared``), so K counts rows, not rows per checker."""

    _by_run: "weakref.WeakValueDictionary[int, Trial]" = weakref.WeakValueDictionary()

    @classmethod
    def shared(cls, run_cfg: Any, limit: int | None) -> "Trial":
        key = id(run_cfg)
        found = cls._by_run.get(key)
        if found is None or found.limit != limit:
            found = cls(limit)
            cls._by_run[key] = found
        return found

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def admit(self) -> tuple[bool, int]:
        """``(judge this row?, its trial number)``."""
        if self.limit is None:
            return True, 0
        with self._lock:
            if self.used >= self.limit:
                return False, 0
            self.used += 1
            return True, self.used

    def show(self, number: int, item_id: str, calls: list[tuple[str, list[dict[str, Any]], str, str]]) -> None:
        """One block per row: for each call (label, input messages, raw output, parse result)."""
        lines = [f"=== judge trial {number}/{self.limit}: item {item_id} ==="]
        for label, messages, output, parsed in calls:
            lines.append(f"--- judge input{label} ---")
            lines += [f"[{m['role']}]\n{m['content']}" for m in messages]
            lines.append(f"--- judge output{label} ---")
            lines.append(output)
            lines.append(f"--- parsed{label}: {parsed} ---")
        print("\n".join(lines), file=sys.stderr, flush=True)
