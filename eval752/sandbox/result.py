"""What a sandboxed run gives back, and the plain-words reason for how it ended."""
from __future__ import annotations

import signal as _signal
from dataclasses import dataclass, field

STATUSES = ("passed", "failed", "timeout", "error", "killed")


def signal_name(number: int | None) -> str:
    if number is None:
        return ""
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class SandboxResult:
    """How one program ended. ``status``:

    - ``passed``: exit code 0;
    - ``failed``: a non-zero exit code (an uncaught exception gives 1);
    - ``timeout``: still running at the wall-clock limit, so every process of it was killed;
    - ``killed``: ended by a signal it did not send itself (CPU limit SIGXCPU, SIGKILL, SIGSEGV ...);
    - ``error``: the sandbox could not start it.

    ``stdout`` and ``stderr`` are cut to the run's output limit (head and tail kept, ``truncated`` set).
    ``isolation`` names the mechanisms that were in force, e.g. ``["tmpdir", "rlimits", "clean-env",
    "process-group", "userns", "netns", "pidns", "pids-cgroup"]``; "socket-guard" in place of "netns"
    means only the Python-level network guard held.
    """

    status: str
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    duration_s: float
    isolation: list[str] = field(default_factory=list)
    timeout_s: float | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "passed"

    def last_error_line(self) -> str:
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def reason(self) -> str:
        """``passed``, ``timeout after 10s``, ``memory limit: MemoryError``, ``failed: AssertionError``..."""
        if self.status == "passed":
            return "passed"
        if self.status == "timeout":
            return f"timeout after {self.timeout_s:g}s"
        if self.status == "error":
            return f"sandbox error: {self.last_error_line() or 'could not start'}"
        if self.status == "killed":
            name = signal_name(self.signal)
            if name == "SIGXCPU":
                return "cpu time limit"
            if name == "SIGXFSZ":
                return "file size limit"
            if name == "SIGKILL":
                return "killed by SIGKILL (memory limit?)"
            return f"killed by {name}"
        last = self.last_error_line()
        if last.startswith("MemoryError"):
            return f"memory limit: {last}"
        if "[Errno 27]" in last:  # EFBIG: RLIMIT_FSIZE reached (Python ignores SIGXFSZ)
            return f"file size limit: {last}"
        return f"failed: {last}" if last else f"failed: exit code {self.exit_code}"
