"""Tests of eval752.sandbox: limits, isolation, cleanup, and every HumanEval canonical solution."""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from eval752.sandbox import MAX_CONCURRENT, SANDBOX_ENV, arun_sandboxed, available_isolation, probe, run_sandboxed

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
BASE = ["tmpdir", "rlimits", "clean-env", "process-group"]
ISOLATION = available_isolation()
NETNS = "netns" in ISOLATION
PROCESS_CAP = "pids-cgroup" in ISOLATION or "nproc-rlimit" in ISOLATION
UNREACHABLE = "failed: OSError: [Errno 101] Network is unreachable"
GUARDED = "failed: PermissionError: network access is disabled in the sandbox"


def pids_with_arg(token: str) -> list[int]:
    """Processes whose command line has ``token`` as one of its arguments."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                args = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if token.encode() in args:
                found.append(int(entry))
    return found


def wait_gone(token: str, within_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while (left := pids_with_arg(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def reexec_with(token: str) -> str:
    """Program prelude: restart under a marker argument, so the test can find every process of it."""
    return textwrap.dedent(f"""\
        import os, sys
        if {token!r} not in sys.argv:
            os.execv(sys.executable, [sys.executable, "-S", sys.argv[0], {token!r}])
        """)


@pytest.fixture
def guard_only(monkeypatch):
    """Pretend that no namespace can be made here: the fallback path (socket guard, no PID namespace)."""
    monkeypatch.setattr(probe, "namespaces", lambda: ((), ()))


def test_passing_program_reports_output_and_isolation():
    r = run_sandboxed("print('hello')\n")
    assert (r.status, r.exit_code, r.signal, r.stdout, r.stderr) == ("passed", 0, None, "hello\n", "")
    assert r.reason() == "passed" and r.ok and not r.truncated
    assert r.isolation == ISOLATION
    assert r.isolation[:4] == BASE
    assert ("netns" in r.isolation) != ("socket-guard" in r.isolation)
    assert 0 < r.duration_s < 5


def test_exception_gives_failed_with_last_stderr_line():
    r = run_sandboxed("raise ValueError('bad input')\n")
    assert (r.status, r.exit_code, r.signal) == ("failed", 1, None)
    assert r.reason() == "failed: ValueError: bad input"
    assert r.stderr.startswith("Traceback")


def test_exit_code_without_output():
    r = run_sandboxed("import sys; sys.exit(3)\n")
    assert (r.status, r.exit_code, r.reason()) == ("failed", 3, "failed: exit code 3")


def test_infinite_loop_times_out():
    start = time.monotonic()
    r = run_sandboxed("while True:\n    pass\n", timeout_s=1, cpu_s=30)
    assert time.monotonic() - start < 5
    assert (r.status, r.exit_code, r.reason()) == ("timeout", None, "timeout after 1s")


def test_sleeping_program_times_out():
    r = run_sandboxed("import time\ntime.sleep(60)\n", timeout_s=0.5)
    assert (r.status, r.reason()) == ("timeout", "timeout after 0.5s")


def test_cpu_limit_kills_with_sigxcpu():
    r = run_sandboxed("while True:\n    pass\n", timeout_s=20, cpu_s=1)
    assert (r.status, r.signal, r.reason()) == ("killed", 24, "cpu time limit")
    assert r.duration_s < 10


def test_memory_hog_fails_with_memory_error():
    r = run_sandboxed("blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 2**20))\n", memory_mb=256)
    assert (r.status, r.reason()) == ("failed", "memory limit: MemoryError")


def test_single_huge_allocation_fails_with_memory_error():
    r = run_sandboxed("x = bytearray(4 * 2**30)\n", memory_mb=512)
    assert r.reason() == "memory limit: MemoryError"


def test_huge_file_stops_at_the_file_size_limit():
    src = "with open('big.bin', 'wb') as f:\n    for _ in range(100):\n        f.write(b'x' * 2**20)\n"
    r = run_sandboxed(src, fsize_mb=4)
    assert (r.status, r.reason()) == ("failed", "file size limit: OSError: [Errno 27] File too large")


def test_output_is_capped_and_truncated_head_and_tail():
    r = run_sandboxed("print('A' * 300000)\nprint('THE END')\n", max_output_bytes=1000)
    assert r.truncated and r.status == "passed"
    assert r.stdout.startswith("A" * 500) and r.stdout.endswith("THE END\n")
    assert "bytes truncated" in r.stdout and len(r.stdout) < 1100


def test_environment_is_empty_but_for_the_minimum(monkeypatch):
    monkeypatch.setenv("EVAL752_FAKE_API_KEY", "sk-test-should-not-leak")
    r = run_sandboxed("import os\nprint(sorted(os.environ.items()))\n")
    assert r.stdout == f"{sorted(SANDBOX_ENV.items())}\n"
    assert "sk-test" not in r.stdout


def test_other_processes_environment_is_unreadable():
    secret = f"secret-{uuid.uuid4().hex}"
    holder = subprocess.Popen(["sleep", "30"], env={"EVAL752_HOLDER_KEY": secret, "PATH": "/usr/bin:/bin"})
    try:
        src = textwrap.dedent(f"""\
            import os
            found = []
            for pid in os.listdir('/proc'):
                try:
                    if {secret!r}.encode() in open(f'/proc/{{pid}}/environ', 'rb').read():
                        found.append(pid)
                except OSError:
                    pass
            print(len(found))
            """)
        r = run_sandboxed(src)
    finally:
        holder.kill()
        holder.wait()
    if "userns" not in r.isolation:
        pytest.skip("no user namespace here: same-user processes' /proc/<pid>/environ stay readable")
    assert (r.status, r.stdout) == ("passed", "0\n")


def test_stdin_is_closed():
    r = run_sandboxed("input()\n")
    assert r.reason() == "failed: EOFError: EOF when reading a line"


def test_working_folder_is_fresh_and_deleted():
    r = run_sandboxed("import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())\nprint(os.listdir('.'))\n")
    cwd, listing = r.stdout.splitlines()
    assert listing == "['left.txt']"
    assert not Path(cwd).exists() and not Path(cwd).parent.exists()


def _loopback_server():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.5)
    return server


def _connect_source(host: str, port: int) -> str:
    return (f"import socket\ns = socket.create_connection(({host!r}, {port}), timeout=3)\n"
            "s.sendall(b'leak')\nprint('connected')\n")


def _assert_nobody_came(server: socket.socket) -> None:
    with pytest.raises(socket.timeout):
        server.accept()


def test_loopback_server_of_the_host_is_not_reachable():
    with _loopback_server() as server:
        r = run_sandboxed(_connect_source("127.0.0.1", server.getsockname()[1]))
        _assert_nobody_came(server)
    assert r.reason() == (UNREACHABLE if NETNS else GUARDED)
    assert "connected" not in r.stdout


def test_external_address_is_not_reachable():
    r = run_sandboxed(_connect_source("203.0.113.1", 80), timeout_s=10)  # TEST-NET-3: never routed anyway
    assert r.reason() == (UNREACHABLE if NETNS else GUARDED)


def test_network_true_drops_network_isolation():
    r = run_sandboxed("print(1)\n", network=True)
    assert "netns" not in r.isolation and "socket-guard" not in r.isolation
    assert r.status == "passed"


def test_bounded_fork_bomb_is_stopped_and_cleaned_up():
    token = f"forkbomb-{uuid.uuid4().hex}"
    bound = 2000 if PROCESS_CAP else 100  # without any process cap keep the bomb small enough to be harmless
    src = reexec_with(token) + textwrap.dedent(f"""\
        import time
        for i in range({bound}):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        print('forked all')
        """)
    r = run_sandboxed(src, timeout_s=20, nproc=32)
    if PROCESS_CAP:
        assert r.status == "failed"
        assert r.reason() == "failed: BlockingIOError: [Errno 11] Resource temporarily unavailable"
    else:
        assert (r.status, r.stdout) == ("passed", "forked all\n")
    assert wait_gone(token) == []
    assert subprocess.run(["true"]).returncode == 0  # the machine can still start processes


def test_background_processes_do_not_outlive_the_program():
    token = f"orphan-{uuid.uuid4().hex}"
    src = reexec_with(token) + "import time\nif os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n"
    src += "print('parent done')\n"
    r = run_sandboxed(src)
    assert (r.status, r.stdout) == ("passed", "parent done\n")
    assert wait_gone(token) == []


def test_timeout_kills_every_process_of_the_program():
    token = f"tree-{uuid.uuid4().hex}"
    src = reexec_with(token) + "import time\nfor _ in range(3):\n    os.fork()\ntime.sleep(60)\n"
    r = run_sandboxed(src, timeout_s=1)
    assert r.status == "timeout"
    assert wait_gone(token) == []


def test_fallback_without_namespaces_uses_the_socket_guard(guard_only):
    with _loopback_server() as server:
        r = run_sandboxed(_connect_source("127.0.0.1", server.getsockname()[1]))
        _assert_nobody_came(server)
    assert "socket-guard" in r.isolation and "netns" not in r.isolation and "pidns" not in r.isolation
    assert r.isolation == available_isolation()
    assert r.reason() == GUARDED
    assert run_sandboxed("import sys\nprint(sys.argv[0].endswith('main.py'))\n").stdout == "True\n"


def test_fallback_statuses_come_from_the_return_code(guard_only):
    assert run_sandboxed("print(2)\n").status == "passed"
    assert run_sandboxed("raise KeyError('k')\n").reason() == "failed: KeyError: 'k'"
    r = run_sandboxed("while True:\n    pass\n", cpu_s=1, timeout_s=20)
    assert (r.status, r.signal, r.reason()) == ("killed", 24, "cpu time limit")


def test_fallback_kills_background_processes(guard_only):
    token = f"fallback-orphan-{uuid.uuid4().hex}"
    src = reexec_with(token) + "import time\nif os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n"
    assert run_sandboxed(src).status == "passed"
    assert wait_gone(token) == []


@pytest.mark.parametrize("option, value", [("timeout_s", 0), ("memory_mb", -1), ("cpu_s", "10"), ("nproc", True)])
def test_nonsense_limits_are_rejected(option, value):
    with pytest.raises(ValueError, match=f"run_sandboxed: {option} must be a number > 0"):
        run_sandboxed("pass\n", **{option: value})


def test_async_run_does_not_block_the_event_loop():
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        task = asyncio.create_task(ticker())
        r = await arun_sandboxed("import time\ntime.sleep(1)\nprint('slept')\n")
        task.cancel()
        return r, ticks

    r, ticks = asyncio.run(main())
    assert (r.status, r.stdout) == ("passed", "slept\n")
    assert ticks >= 10


def test_async_timeout_and_repeated_event_loops():
    for _ in range(2):  # the per-loop semaphore must not trip over a second asyncio.run
        r = asyncio.run(arun_sandboxed("import time\ntime.sleep(30)\n", timeout_s=0.5))
        assert r.reason() == "timeout after 0.5s"


def test_async_sandboxes_are_limited_to_the_cpu_count():
    async def main():
        start = time.monotonic()
        results = await asyncio.gather(*(arun_sandboxed("import time\ntime.sleep(0.4)\n")
                                         for _ in range(2 * MAX_CONCURRENT)))
        return time.monotonic() - start, results

    elapsed, results = asyncio.run(main())
    assert all(r.status == "passed" for r in results)
    assert elapsed >= 0.8  # two waves of MAX_CONCURRENT


def test_no_cgroups_or_temp_folders_are_left_behind():
    root = probe.pids_cgroup_root()
    mine = f"eval752-{os.getpid()}-*"  # other test processes may be running sandboxes of their own
    before = set(root.glob(mine)) if root else set()
    run_sandboxed("print(1)\n")
    asyncio.run(arun_sandboxed("print(1)\n"))
    after = set(root.glob(mine)) if root else set()
    assert after <= before


def test_every_humaneval_canonical_solution_passes():
    path = REALDATA / "humaneval" / "HumanEval.jsonl.gz"
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    from eval752.datasets import import_humaneval

    dataset, warnings = import_humaneval(path)
    items = list(dataset.items)
    assert (len(items), warnings) == (164, [])

    async def run_all():
        programs = [f"{it.meta['prompt']}{it.answer}\n\n{it.meta['test']}\n\ncheck({it.meta['entry_point']})\n"
                    for it in items]
        return await asyncio.gather(*(arun_sandboxed(p) for p in programs))

    results = asyncio.run(run_all())
    failures = [(it.id, r.reason()) for it, r in zip(items, results) if r.status != "passed"]
    assert failures == []
