"""Judge prompt templates: Jinja2 in a sandbox.

A template is rendered by ``jinja2.sandbox.SandboxedEnvironment`` with ``StrictUndefined`` and no loader:
``{% include %}``/``{% import %}``/``{% extends %}`` cannot read files, attributes such as ``__class__`` or
``__globals__`` cannot be reached, and an unknown variable is an error, not an empty string. Every such
failure is a ``JudgeTemplateError`` naming the template and what was refused.

Where a template comes from (``judge.*``):

* ``template: mtbench_single_v1`` names a built-in file ``eval752/judge_templates/<name>.jinja``;
  ``template: path/to/file.jinja`` any file. A first line ``{#- eval752 mode=scale system="..." -#}``
  declares the template's mode and system message.
* ``prompts_file: .../judge_prompts.jsonl`` with ``prompt_name: single-v1`` takes the official MT-bench
  prompt: its ``system_prompt`` and ``prompt_template`` (``{question}`` style placeholders are turned into
  Jinja expressions, then rendered in the same sandbox). ``type: pairwise`` gives mode pairwise.

Variables: ``question``, ``messages`` (what the model under test was sent), ``reference`` (the item's
``answer``), ``response`` and ``reasoning`` (the judged response, after pre-processing), ``criteria``,
``meta`` (and each meta key on its own unless it shadows one of these), ``item_id``, ``item_type``;
pairwise templates get ``response_a`` and ``response_b``. MT-bench names are aliases: ``answer``,
``answer_a``, ``answer_b``, ``ref_answer_1``, ``question_1``, ``answer_1``.
"""
from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment, SecurityError

from ..errors import ConfigError

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "judge_templates"
MODES = ("scale", "binary", "pairwise")
_HEADER = re.compile(r"\A\{#-?\s*eval752\s+(?P<body>.*?)\s*-?#\}", re.DOTALL)
_FORMAT_FIELD = re.compile(r"\{(\w+)\}")


class JudgeTemplateError(ConfigError):
    """A judge template that cannot be loaded or rendered (syntax, sandbox refusal, unknown variable)."""


def _environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@dataclass(frozen=True)
class JudgeTemplate:
    name: str
    source: str
    mode: str | None = None
    system: str | None = None

    def __post_init__(self) -> None:
        try:
            compiled = _environment().from_string(self.source)
        except TemplateError as e:
            raise JudgeTemplateError(f"judge template {self.name!r}: {_describe(e)}") from None
        object.__setattr__(self, "_compiled", compiled)

    def render(self, variables: Mapping[str, Any]) -> str:
        try:
            return self._compiled.render(dict(variables)).strip()  # type: ignore[attr-defined]
        except (TemplateError, SecurityError, TypeError, OverflowError) as e:
            raise JudgeTemplateError(f"judge template {self.name!r}: {_describe(e)}") from None

    def messages(self, variables: Mapping[str, Any], *, system_in_user: bool = False) -> list[dict[str, str]]:
        """The chat messages sent to the judge: the system message (if any) and the rendered template."""
        user = self.render(variables)
        if self.system and system_in_user:
            return [{"role": "user", "content": f"{self.system}\n\n{user}"}]
        if self.system:
            return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]
        return [{"role": "user", "content": user}]


def _describe(e: BaseException) -> str:
    msg = str(e) or type(e).__name__
    if isinstance(e, SecurityError) or "unsafe" in msg:
        return f"refused by the sandbox: {msg} (judge templates may not reach Python internals)"
    if "no loader" in msg or type(e).__name__ == "TemplateNotFound":
        return f"refused by the sandbox: {msg} (judge templates may not include, import or read files)"
    if type(e).__name__ == "UndefinedError":
        return f"{msg}; available variables: {', '.join(VARIABLE_NAMES)} (pairwise: response_a, response_b)"
    return f"{type(e).__name__}: {msg}"


VARIABLE_NAMES = ("question", "messages", "reference", "response", "reasoning", "criteria", "meta",
                  "item_id", "item_type")


def builtin_names() -> list[str]:
    return sorted(p.stem for p in TEMPLATES_DIR.glob("*.jinja"))


def parse_header(source: str) -> dict[str, str]:
    m = _HEADER.match(source)
    if not m:
        return {}
    out = {}
    for token in shlex.split(m.group("body")):
        key, sep, value = token.partition("=")
        if sep:
            out[key] = value
    return out


def template_from_source(name: str, source: str) -> JudgeTemplate:
    header = parse_header(source)
    mode = header.get("mode")
    if mode is not None and mode not in MODES:
        raise JudgeTemplateError(f"judge template {name!r}: mode {mode!r} is not one of {', '.join(MODES)}")
    return JudgeTemplate(name=name, source=source, mode=mode, system=header.get("system"))


def load_template(ref: str) -> JudgeTemplate:
    """A built-in template by name, or a template file by path."""
    looks_like_path = "/" in ref or ref.endswith((".jinja", ".j2", ".txt")) or Path(ref).is_file()
    if looks_like_path:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise JudgeTemplateError(f"judge.template {ref!r}: no such file")
        return template_from_source(str(path), path.read_text(encoding="utf-8"))
    path = TEMPLATES_DIR / f"{ref}.jinja"
    if not path.is_file():
        valid = builtin_names()
        close = difflib.get_close_matches(ref, valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise JudgeTemplateError(f"unknown judge template {ref!r}{hint}; built-in: {', '.join(valid)}, "
                                 "or a path to a .jinja file")
    return template_from_source(ref, path.read_text(encoding="utf-8"))


def load_prompts_file(path: str, name: str | None) -> JudgeTemplate:
    """One prompt of an MT-bench ``judge_prompts.jsonl`` (fields name, type, system_prompt, prompt_template)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise JudgeTemplateError(f"judge.prompts_file {path!r}: no such file")
    prompts: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            prompts[str(row["name"])] = row
        except (ValueError, KeyError, TypeError):
            raise JudgeTemplateError(f"{p}:{n}: not a judge prompt (JSON with name, prompt_template)") from None
    if not name:
        raise JudgeTemplateError(f"judge.prompts_file needs judge.prompt_name; {p} has: {', '.join(prompts)}")
    if name not in prompts:
        close = difflib.get_close_matches(name, list(prompts), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise JudgeTemplateError(f"judge.prompt_name {name!r} is not in {p}{hint}; it has: {', '.join(prompts)}")
    row = prompts[name]
    if "{{" in row.get("prompt_template", "") or "{%" in row.get("prompt_template", ""):
        raise JudgeTemplateError(f"{p}: prompt {name!r} already contains Jinja syntax; use judge.template")
    source = _FORMAT_FIELD.sub(lambda m: "{{ " + m.group(1) + " }}", str(row.get("prompt_template", "")))
    mode = "pairwise" if row.get("type") == "pairwise" else ("scale" if "[[rating]]" in str(row) else None)
    return JudgeTemplate(name=f"{p.name}:{name}", source=source, mode=mode, system=row.get("system_prompt") or None)


def context(*, item: Any, response: str, reasoning: str | None, messages: Any = (),
            response_a: str | None = None, response_b: str | None = None) -> dict[str, Any]:
    """The variables a judge template sees (see the module docstring)."""
    meta = dict(getattr(item, "meta", None) or {})
    reference = item.answer
    if isinstance(reference, tuple):
        reference = list(reference)
    reference = "" if reference is None else reference
    v: dict[str, Any] = {k: val for k, val in meta.items() if isinstance(k, str) and k.isidentifier()}
    v.update(question=item.text, messages=[dict(m) for m in messages], reference=reference,
             response=response, reasoning=reasoning or "", criteria=item.criteria, meta=meta,
             item_id=item.id, item_type=item.type)
    v.update(answer=response, ref_answer_1=reference, question_1=item.text, answer_1=response)
    if response_a is not None:
        v.update(response_a=response_a, response_b=response_b, answer_a=response_a, answer_b=response_b)
    return v
