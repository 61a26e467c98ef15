"""Tests of the "code" checker: code extraction, program assembly, verdicts, and HumanEval end to end."""
from __future__ import annotations

import asyncio
import os
import socket
import textwrap
from pathlib import Path

import pytest

import eval752.checkers  # noqa: F401  (registers the checkers)
from eval752.checkers.base import CHECKERS, DEFAULT_CHECKER_FOR_TYPE
from eval752.checkers.code import CodeChecker, extract_code, humaneval_program
from eval752.errors import ConfigError, DatasetError
from eval752.metrics import pass_at_k
from eval752.sandbox import available_isolation
from eval752.types import Item, Response

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
NETNS = "netns" in available_isolation()

PROMPT = 'def add(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n'
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"
HE_ITEM = Item(id="t/add", type="code", text=PROMPT, answer="    return a + b\n",
               meta={"entry_point": "add", "test": TEST, "prompt": PROMPT})
NATIVE = Item(id="sq", type="code", text="Write square(x).",
              meta={"tests": "assert square(3) == 9\nassert square(-2) == 4"})


def fenced(code: str, lang: str = "python") -> str:
    return f"Here you go:\n```{lang}\n{code}\n```\nHope it helps."


def check(item: Item, text: str, **options):
    return CHECKERS.create("code", **options).check(item, Response(text=text))


@pytest.mark.parametrize("text, code", [
    ("```python\nx = 1\n```", "x = 1"),
    ("```py\nx = 1\n```", "x = 1"),
    ("```\nx = 2\n```", "x = 2"),
    ("```python\nfirst = 1\n```\ntext\n```python\nsecond = 2\n```", "second = 2"),
    ("```python\nwanted = 1\n```\n```bash\nls\n```", "wanted = 1"),
    ("```bash\nls\n```\n```text\nlast = 1\n```", "last = 1"),
    ("    return a + b\n", "    return a + b"),
    ("def f():\n    return 1", "def f():\n    return 1"),
    ("```python\n    return x\n```", "    return x"),
    ("Sure:\n```python\ncut = 'off", "cut = 'off"),
    ("<think>```python\nwrong = 1\n```</think>\n```python\nright = 1\n```", "right = 1"),
    ("", ""),
])
def test_extract_code(text, code):
    assert extract_code(text) == code


def test_program_for_a_body_continues_the_prompt():
    expected = f"{PROMPT}    return a + b\n\n{TEST}\n\ncheck(add)\n"
    assert humaneval_program(PROMPT, "    return a + b", TEST, "add") == expected


def test_program_for_a_flush_left_body_indents_it():
    program = humaneval_program(PROMPT, "s = a + b\nreturn s", TEST, "add")
    assert program.startswith(f"{PROMPT}    s = a + b\n    return s\n")


def test_program_for_a_whole_function_keeps_the_prompt_before_it():
    whole = "def add(a, b):\n    return a + b"
    assert humaneval_program(PROMPT, whole, TEST, "add") == f"{PROMPT}\n{whole}\n\n{TEST}\n\ncheck(add)\n"


def test_registered_as_the_default_for_code_items():
    assert DEFAULT_CHECKER_FOR_TYPE["code"] == "code"
    assert isinstance(CHECKERS.create("code"), CodeChecker)


def test_options_are_validated():
    with pytest.raises(ConfigError, match=r"checker 'code': unknown option 'timeout' \(did you mean 'timeout_s'\?\)"):
        CHECKERS.create("code", timeout=3)
    with pytest.raises(ConfigError, match="option 'memory_mb' must be a number > 0, not 0"):
        CHECKERS.create("code", memory_mb=0)
    with pytest.raises(ConfigError, match="option 'tests' must be a string or a list of strings"):
        CHECKERS.create("code", tests=5)
    c = CHECKERS.create("code", timeout_s=3)
    assert (c.timeout_s, c.cpu_s, c.memory_mb) == (3.0, 3.0, 1024.0)


@pytest.mark.parametrize("text", [fenced("    return a + b"), "    return a + b\n", fenced("return a + b"),
                                  fenced("def add(a, b):\n    return a + b"), "def add(a, b):\n    return b + a\n"])
def test_humaneval_style_item_passes(text):
    v = check(HE_ITEM, text)
    assert (v.score, v.passed, v.reason) == (1.0, True, "passed")
    assert v.details["status"] == "passed" and v.details["isolation"] == available_isolation()


def test_wrong_solution_fails_with_the_assertion():
    v = check(HE_ITEM, fenced("    return a - b"))
    assert (v.score, v.passed, v.reason) == (0.0, False, "failed: AssertionError")
    assert v.details["exit_code"] == 1 and "candidate(2, 3) == 5" in v.details["stderr"]
    assert v.extracted == "    return a - b"


def test_syntax_error_is_a_failure():
    v = check(HE_ITEM, fenced("    return a +"))
    assert v.reason == "failed: SyntaxError: invalid syntax"


def test_native_item_with_meta_tests():
    assert check(NATIVE, fenced("def square(x):\n    return x * x")).reason == "passed"
    assert check(NATIVE, fenced("def square(x):\n    return 2 * x")).reason == "failed: AssertionError"


def test_native_item_with_a_list_of_tests_and_option_tests():
    item = Item(id="l", type="code", text="", meta={"tests": ["assert f() == 1", "assert f() + 1 == 2"]})
    assert check(item, "def f():\n    return 1").passed
    bare = Item(id="o", type="code", text="")
    assert check(bare, "def f():\n    return 1", tests="assert f() == 1").passed
    assert check(bare, "def f():\n    return 0", tests=["assert f() == 1, 'f must be 1'"]).reason == \
        "failed: AssertionError: f must be 1"


def test_item_without_tests_is_a_dataset_error():
    with pytest.raises(DatasetError, match="item 'none': a code item needs tests"):
        check(Item(id="none", type="code", text=""), "x = 1")


def test_no_code_and_failed_requests():
    v = check(HE_ITEM, "")
    assert (v.score, v.reason, v.answered) == (0.0, "no code in response", False)
    assert check(HE_ITEM, "```python\n\n```").reason == "no code in response"
    v = CHECKERS.create("code").check(HE_ITEM, Response(error="HTTP 500"))
    assert (v.reason, v.answered) == ("no response: HTTP 500", False)


def test_infinite_loop_times_out():
    v = check(HE_ITEM, fenced("    while True:\n        pass"), timeout_s=1)
    assert (v.score, v.reason) == (0.0, "timeout after 1s")


def test_memory_hog_reports_the_memory_limit():
    v = check(HE_ITEM, fenced("    x = bytearray(8 * 2**30)\n    return a + b"), memory_mb=512)
    assert (v.score, v.reason) == (0.0, "memory limit: MemoryError")


def test_cpu_limit():
    v = check(HE_ITEM, fenced("    while True:\n        pass"), timeout_s=20, cpu_s=1)
    assert (v.score, v.reason, v.details["signal"]) == (0.0, "cpu time limit", 24)


def test_huge_file_reports_the_file_size_limit():
    body = ("    with open('huge', 'wb') as f:\n        for _ in range(64):\n            f.write(b'0' * 2**20)\n"
            "    return a + b")
    assert check(HE_ITEM, fenced(body)).reason == "file size limit: OSError: [Errno 27] File too large"


def test_fork_bomb_fails_and_does_not_pass():
    body = ("    import os, time\n    for _ in range(2000):\n        if os.fork() == 0:\n            time.sleep(30)\n"
            "            os._exit(0)\n    return a + b")
    caps = {"pids-cgroup", "nproc-rlimit"} & set(available_isolation())
    if not caps:
        pytest.skip("no process cap on this machine (root without a writable pids cgroup)")
    v = check(HE_ITEM, fenced(body), timeout_s=10)
    assert v.reason == "failed: BlockingIOError: [Errno 11] Resource temporarily unavailable"


def test_network_call_does_not_get_through():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    body = (f"    import socket\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'x')\n"
            "    return a + b")
    try:
        v = check(HE_ITEM, fenced(body))
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
    expected = ("failed: OSError: [Errno 101] Network is unreachable" if NETNS
                else "failed: PermissionError: network access is disabled in the sandbox")
    assert v.reason == expected
    body = "    import urllib.request\n    urllib.request.urlopen('http://203.0.113.1/', timeout=3)\n    return a + b"
    assert check(HE_ITEM, fenced(body)).passed is False


def test_environment_variable_of_the_test_process_is_not_visible(monkeypatch):
    monkeypatch.setenv("EVAL752_SECRET_TOKEN", "tok-123")
    assert os.environ["EVAL752_SECRET_TOKEN"] == "tok-123"
    body = ("    import os\n"
            "    assert os.environ.get('EVAL752_SECRET_TOKEN') is None, os.environ['EVAL752_SECRET_TOKEN']\n"
            "    return a + b")
    assert check(HE_ITEM, fenced(body)).reason == "passed"
    body = "    import os\n    return a + b + len(os.environ['EVAL752_SECRET_TOKEN'])"
    assert check(HE_ITEM, fenced(body)).reason == "failed: KeyError: 'EVAL752_SECRET_TOKEN'"


def test_pass_at_k_from_checker_verdicts_over_five_samples():
    samples = [fenced("    return a + b"), fenced("    return a - b"), "def add(a, b):\n    return a + b",
               fenced("    return a * b"), fenced("    return 0")]

    async def judge():
        checker = CHECKERS.create("code")
        return await asyncio.gather(*(checker.acheck(HE_ITEM, Response(text=s)) for s in samples))

    verdicts = asyncio.run(judge())
    assert [v.score for v in verdicts] == [1.0, 0.0, 1.0, 0.0, 0.0]
    n, c = len(verdicts), sum(v.passed for v in verdicts)
    assert pass_at_k(n, c, 1) == pytest.approx(0.4, abs=1e-12)
    assert pass_at_k(n, c, 2) == pytest.approx(0.7, abs=1e-12)
    assert pass_at_k(n, c, 4) == 1.0


def _humaneval_items():
    path = REALDATA / "humaneval" / "HumanEval.jsonl.gz"
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    from eval752.datasets import import_humaneval

    dataset, _ = import_humaneval(path)
    return list(dataset.items)


def test_every_humaneval_canonical_solution_passes_through_the_checker():
    items = _humaneval_items()

    async def judge():
        checker = CHECKERS.create("code")
        bodies = [checker.acheck(it, Response(text=f"```python\n{it.answer}\n```")) for it in items]
        # the same solutions written out as whole functions: the prompt's signature plus the body
        wholes = [checker.acheck(it, Response(text=fenced(textwrap.dedent(it.meta["prompt"] + it.answer))))
                  for it in items]
        return await asyncio.gather(*bodies, *wholes)

    verdicts = asyncio.run(judge())
    labels = [(it.id, "body") for it in items] + [(it.id, "whole") for it in items]
    failures = [(label, v.reason) for label, v in zip(labels, verdicts) if not v.passed]
    assert failures == []
    assert len(verdicts) == 328
