"""The "code" checker: run the model's program against the item's tests in the sandbox.

Code is taken from the response (reasoning blocks removed): the last fenced block marked python (```python,
```py, ```python3), else the last fenced block of any language, else the whole text. An unclosed fence at
the end (a cut-off response) counts as a block.

The program depends on where the tests are:

- HumanEval style, ``item.meta`` has ``test`` and ``entry_point``: the prompt (``meta.prompt``, else the
  item text), then the completion, then the test code and ``check(<entry_point>)``. A completion that
  defines the entry point itself (a whole function) comes after the prompt, whose stub it replaces while
  keeping the prompt's imports and helper functions; otherwise the completion is a body continuing the
  prompt's signature and docstring (a body written flush left is indented to 4 spaces first).
- Native items: the completion followed by ``meta.tests`` (Python asserts: a string or a list of
  strings), else the checker option ``tests``.

Verdict: score 1 when the program exits 0. Reasons: ``passed``, ``failed: AssertionError`` (the last line
of stderr), ``timeout after 10s``, ``memory limit: MemoryError``, ``cpu time limit``, ``file size limit:
...``, ``no code in response``. Details hold the sandbox status, exit code, signal, duration, isolation
mechanisms and the tail of stderr.
"""
from __future__ import annotations

import re
import textwrap
from typing import Any

from ..errors import ConfigError, DatasetError
from ..sandbox import SandboxResult, arun_sandboxed, run_sandboxed
from ..types import Item, Response, Verdict
from ._extract import answer_text, reject_unknown_options, strip_think
from .base import CHECKERS, Checker

_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)
_PYTHON_TAGS = {"python", "py", "python3", "py3"}
STDERR_TAIL_CHARS = 2000


def extract_code(text: str) -> str:
    """The code in a response: last ```python block, else last fenced block, else the whole text."""
    if re.search(r"</?think(?:ing)?>", text, re.I):
        text = strip_think(text)
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    python = [body for lang, body in blocks if lang in _PYTHON_TAGS]
    chosen = python[-1] if python else blocks[-1][1] if blocks else text
    return chosen.strip("\n").rstrip()


def defines(code: str, name: str) -> bool:
    """True when ``code`` defines ``name`` at top level."""
    return re.search(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", code, re.M) is not None


def humaneval_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    if not prompt.endswith("\n"):
        prompt += "\n"
    if defines(completion, entry_point):
        body = "\n" + completion
    else:
        first = next((line for line in completion.splitlines() if line.strip()), "")
        body = completion if first[:1] in (" ", "\t") else textwrap.indent(textwrap.dedent(completion), "    ")
    return f"{prompt}{body}\n\n{test}\n\ncheck({entry_point})\n"


def _tests_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise DatasetError([f"{where}: tests must be a string or a list of strings, not {type(value).__name__}"])


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"checker 'code': option {name!r} must be a number > 0, not {value!r}")
    return float(value)


@CHECKERS.register("code")
class CodeChecker(Checker):
    """Runs the extracted program with the item's tests in the sandbox; passes when it exits 0."""

    name = "code"

    def __init__(self, *, timeout_s: float = 10, memory_mb: float = 1024, cpu_s: float | None = None,
                 tests: Any = None, **unknown) -> None:
        reject_unknown_options(self.name, unknown, ("timeout_s", "memory_mb", "cpu_s", "tests"))
        self.timeout_s = _positive("timeout_s", timeout_s)
        self.memory_mb = _positive("memory_mb", memory_mb)
        self.cpu_s = _positive("cpu_s", cpu_s) if cpu_s is not None else self.timeout_s
        if tests is not None and not isinstance(tests, (str, list, tuple)):
            raise ConfigError(f"checker 'code': option 'tests' must be a string or a list of strings, "
                              f"not {tests!r}")
        self.tests = tests

    def program(self, item: Item, code: str) -> str:
        meta = item.meta or {}
        if meta.get("test") and meta.get("entry_point"):
            prompt = meta.get("prompt") or item.text
            return humaneval_program(prompt, code, meta["test"], meta["entry_point"])
        if meta.get("tests"):
            return f"{code}\n\n{_tests_text(meta['tests'], f'item {item.id!r}: meta.tests')}\n"
        if self.tests:
            return f"{code}\n\n{_tests_text(self.tests, 'checker code: option tests')}\n"
        raise DatasetError([f"item {item.id!r}: a code item needs tests: meta.test with meta.entry_point "
                            "(HumanEval style), meta.tests, or the checker option 'tests'"])

    def _prepare(self, item: Item, response: Response) -> tuple[str | None, str, Verdict | None]:
        _, empty = answer_text(response)
        if empty is not None and response.error:
            return None, "", empty
        code = extract_code(response.text or "")
        if not code.strip():
            return None, "", Verdict(0.0, False, "no code in response", None, answered=False)
        return self.program(item, code), code, None

    def _limits(self) -> dict[str, float]:
        return {"timeout_s": self.timeout_s, "cpu_s": self.cpu_s, "memory_mb": self.memory_mb}

    def check(self, item: Item, response: Response) -> Verdict:
        program, code, early = self._prepare(item, response)
        if early is not None:
            return early
        return self._verdict(run_sandboxed(program, **self._limits()), code)

    async def acheck(self, item: Item, response: Response) -> Verdict:
        program, code, early = self._prepare(item, response)
        if early is not None:
            return early
        return self._verdict(await arun_sandboxed(program, **self._limits()), code)

    @staticmethod
    def _verdict(result: SandboxResult, code: str) -> Verdict:
        details = {
            "status": result.status,
            "exit_code": result.exit_code,
            "signal": result.signal,
            "duration_s": result.duration_s,
            "isolation": list(result.isolation),
            "stderr": result.stderr[-STDERR_TAIL_CHARS:],
        }
        ok = result.ok
        return Verdict(float(ok), ok, result.reason(), code, details=details)
