"""Run one Python program in a sandbox: synchronously (``run_sandboxed``) or without blocking an event loop
(``arun_sandboxed``). Both share the plan (``_prepare``) and the reading of the outcome (``_finish``).

Each run gets a fresh temporary folder (the program is ``main.py`` beside its working folder ``work/``;
stdout, stderr and the status written by the sandbox's process 1 are files next to them, so output never
fills a pipe or this process's memory, and RLIMIT_FSIZE caps it too). The folder is deleted afterwards.
Limits are set between fork and exec. The child starts a new session, so its process group can be killed
as a whole at the wall-clock limit; the PID namespace and the pids cgroup (when available, see
``probe``) also catch processes that left that group.

Concurrency: at most ``MAX_CONCURRENT`` (os.cpu_count()) sandboxes run at once: synchronous callers share
a thread semaphore, asynchronous ones an asyncio semaphore per event loop.
"""
from __future__ import annotations

import asyncio
import math
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import probe
from .boot import GUARD_SOURCE, INIT_SOURCE
from .result import SandboxResult

MAX_CONCURRENT = os.cpu_count() or 1
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
SANDBOX_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
# -I would also imply -E, which ignores PYTHONHASHSEED; the environment is entirely ours anyway, so the
# remaining parts of -I are given one by one: -s (no user site) and -P (no unsafe sys.path[0]); -S drops
# site-packages unless asked for, -B writes no .pyc, -u keeps output that precedes a kill.
_PY_FLAGS = ("-s", "-P", "-B", "-u")

_sync_slots = threading.BoundedSemaphore(MAX_CONCURRENT)
_async_slots: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = weakref.WeakKeyDictionary()


def _loop_slots() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slots = _async_slots.get(loop)
    if slots is None:
        slots = _async_slots[loop] = asyncio.Semaphore(MAX_CONCURRENT)
    return slots


@dataclass
class _Plan:
    root: Path
    argv: list[str]
    cwd: Path
    preexec: Callable[[], None]
    pass_fds: tuple[int, ...]
    status_fd: int | None
    cgroup: probe.PidsCgroup | None
    isolation: list[str]
    timeout_s: float
    max_output_bytes: int
    pidns: bool
    files: dict[str, object] = field(default_factory=dict)


def _rlimits(cpu_s: float, memory_mb: float, fsize_mb: float, nproc: int) -> list[tuple[int, int, int]]:
    wanted = [
        (resource.RLIMIT_CPU, math.ceil(cpu_s), math.ceil(cpu_s) + 1),
        (resource.RLIMIT_AS, int(memory_mb * 2**20), int(memory_mb * 2**20)),
        (resource.RLIMIT_FSIZE, int(fsize_mb * 2**20), int(fsize_mb * 2**20)),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if not probe.is_root():  # RLIMIT_NPROC counts all the user's processes; root ignores it
        total = probe.user_process_count() + nproc
        wanted.append((resource.RLIMIT_NPROC, total, total))
    out = []
    for res, soft, hard in wanted:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
        out.append((res, min(soft, hard), hard))
    return out


def _prepare(source: str, *, timeout_s: float, cpu_s: float, memory_mb: float, fsize_mb: float, nproc: int,
             network: bool, site_packages: bool, max_output_bytes: int) -> _Plan:
    for name, value in (("timeout_s", timeout_s), ("cpu_s", cpu_s), ("memory_mb", memory_mb),
                        ("fsize_mb", fsize_mb), ("nproc", nproc), ("max_output_bytes", max_output_bytes)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"run_sandboxed: {name} must be a number > 0, not {value!r}")
    root = Path(tempfile.mkdtemp(prefix="eval752-sandbox-"))
    cwd = root / "work"
    cwd.mkdir()
    script = root / "main.py"
    script.write_text(source, encoding="utf-8")
    isolation = ["tmpdir", "rlimits", "clean-env", "process-group"]

    ns_argv, ns_names = probe.namespaces()
    if network:
        ns_argv = tuple(a for a in ns_argv if a != "--net")
        ns_names = tuple(n for n in ns_names if n != "netns")
    isolation += ns_names
    python = [sys.executable, *_PY_FLAGS, *(() if site_packages else ("-S",))]
    if network or "netns" in ns_names:
        program = [*python, str(script)]
    else:
        program = [*python, "-c", GUARD_SOURCE, str(script)]
        isolation.append("socket-guard")

    status_fd = None
    pidns = "pidns" in ns_names
    if pidns:
        status_fd = os.open(root / "status", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        argv = [*ns_argv, *python, "-c", INIT_SOURCE, str(status_fd), *program]
    else:
        argv = [*ns_argv, *program]

    cgroup = probe.PidsCgroup.create(nproc)
    if cgroup is not None:
        isolation.append("pids-cgroup")
    if not probe.is_root():
        isolation.append("nproc-rlimit")
    limits = _rlimits(cpu_s, memory_mb, fsize_mb, nproc)

    def preexec() -> None:  # runs in the child between fork and exec: keep it to system calls
        for res, soft, hard in limits:
            resource.setrlimit(res, (soft, hard))
        if cgroup is not None:
            cgroup.join()

    return _Plan(root, argv, cwd, preexec, (status_fd,) if status_fd is not None else (), status_fd, cgroup,
                 isolation, float(timeout_s), int(max_output_bytes), pidns)


def _read_output(path: Path, limit: int) -> tuple[str, bool]:
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if size <= limit:
                return f.read().decode("utf-8", "replace"), False
            head = f.read(limit // 2)
            f.seek(size - limit // 2)
            tail = f.read()
    except OSError:
        return "", False
    cut = size - len(head) - len(tail)
    text = head.decode("utf-8", "replace") + f"\n... [{cut} bytes truncated] ...\n" + tail.decode("utf-8", "replace")
    return text, True


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _remove_tree(root: Path) -> None:
    def force(func, path, _exc):  # a program may have taken the write bit off its own folders
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            os.chmod(path, stat.S_IRWXU)
            func(path)
        except OSError:
            pass

    shutil.rmtree(root, onerror=force)


def _finish(plan: _Plan, returncode: int | None, timed_out: bool, duration: float,
            launch_error: str | None) -> SandboxResult:
    try:
        if plan.cgroup is not None:
            plan.cgroup.close()
        status_text = ""
        if plan.status_fd is not None:
            os.lseek(plan.status_fd, 0, os.SEEK_SET)
            status_text = os.read(plan.status_fd, 64).decode("ascii", "replace")
            os.close(plan.status_fd)
        stdout, cut_out = _read_output(plan.root / "stdout", plan.max_output_bytes)
        stderr, cut_err = _read_output(plan.root / "stderr", plan.max_output_bytes)
    finally:
        _remove_tree(plan.root)
    exit_code = sig = None
    if launch_error is not None:
        status, stderr = "error", launch_error
    elif timed_out:
        status = "timeout"
    elif status_text.startswith("exit "):
        exit_code = int(status_text.split()[1])
        status = "passed" if exit_code == 0 else "failed"
    elif status_text.startswith("signal "):
        sig = int(status_text.split()[1])
        status = "killed"
    elif plan.pidns and (returncode or 0) >= 0:
        status = "error"  # process 1 never reported: the namespace itself did not start
        exit_code = returncode
    elif returncode is not None and returncode < 0:
        sig, status = -returncode, "killed"
    else:
        exit_code = returncode
        status = "passed" if returncode == 0 else "failed"
    if status == "failed" and exit_code == 127 and "sandbox: cannot start" in stderr:
        status = "error"
    return SandboxResult(status=status, exit_code=exit_code, signal=sig, stdout=stdout, stderr=stderr,
                         duration_s=round(duration, 6), isolation=list(plan.isolation), timeout_s=plan.timeout_s,
                         truncated=cut_out or cut_err)


def _open_outputs(plan: _Plan) -> tuple[int, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    return os.open(plan.root / "stdout", flags, 0o600), os.open(plan.root / "stderr", flags, 0o600)


def run_sandboxed(source: str, *, timeout_s: float = 10, cpu_s: float = 10, memory_mb: float = 1024,
                  fsize_mb: float = 16, nproc: int = 64, network: bool = False, site_packages: bool = False,
                  max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> SandboxResult:
    """Run ``source`` as a Python program in a sandbox and wait for it (see the package docstring)."""
    with _sync_slots:
        plan = _prepare(source, timeout_s=timeout_s, cpu_s=cpu_s, memory_mb=memory_mb, fsize_mb=fsize_mb,
                        nproc=nproc, network=network, site_packages=site_packages,
                        max_output_bytes=max_output_bytes)
        out_fd, err_fd = _open_outputs(plan)
        start = time.monotonic()
        returncode, timed_out, launch_error = None, False, None
        try:
            proc = subprocess.Popen(plan.argv, cwd=plan.cwd, env=dict(SANDBOX_ENV), stdin=subprocess.DEVNULL,
                                    stdout=out_fd, stderr=err_fd, preexec_fn=plan.preexec,
                                    start_new_session=True, pass_fds=plan.pass_fds, close_fds=True)
        except (OSError, subprocess.SubprocessError) as exc:
            launch_error = f"could not start the sandbox: {exc}"
        else:
            try:
                returncode = proc.wait(timeout=plan.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc.pid)
                returncode = proc.wait()
            if not plan.pidns:
                _kill_group(proc.pid)  # background processes the program left behind
        finally:
            os.close(out_fd)
            os.close(err_fd)
        return _finish(plan, returncode, timed_out, time.monotonic() - start, launch_error)


async def arun_sandboxed(source: str, *, timeout_s: float = 10, cpu_s: float = 10, memory_mb: float = 1024,
                         fsize_mb: float = 16, nproc: int = 64, network: bool = False, site_packages: bool = False,
                         max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> SandboxResult:
    """``run_sandboxed`` for asyncio: the event loop keeps running while the program does."""
    async with _loop_slots():
        plan = _prepare(source, timeout_s=timeout_s, cpu_s=cpu_s, memory_mb=memory_mb, fsize_mb=fsize_mb,
                        nproc=nproc, network=network, site_packages=site_packages,
                        max_output_bytes=max_output_bytes)
        out_fd, err_fd = _open_outputs(plan)
        start = time.monotonic()
        returncode, timed_out, launch_error = None, False, None
        try:
            proc = await asyncio.create_subprocess_exec(
                *plan.argv, cwd=plan.cwd, env=dict(SANDBOX_ENV), stdin=subprocess.DEVNULL, stdout=out_fd,
                stderr=err_fd, preexec_fn=plan.preexec, start_new_session=True, pass_fds=plan.pass_fds,
                close_fds=True)
        except (OSError, subprocess.SubprocessError) as exc:
            launch_error = f"could not start the sandbox: {exc}"
        else:
            try:
                returncode = await asyncio.wait_for(proc.wait(), plan.timeout_s)
            except asyncio.TimeoutError:
                timed_out = True
                _kill_group(proc.pid)
                returncode = await proc.wait()
            except asyncio.CancelledError:
                _kill_group(proc.pid)
                await asyncio.shield(proc.wait())
                raise
            if not plan.pidns:
                _kill_group(proc.pid)
        finally:
            os.close(out_fd)
            os.close(err_fd)
        return await asyncio.to_thread(_finish, plan, returncode, timed_out, time.monotonic() - start,
                                       launch_error)
