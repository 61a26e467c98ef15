"""What this machine offers for isolation, found out once per process and cached.

Namespaces. ``unshare`` (util-linux) makes a user namespace (so no root is needed), a network namespace
(only a loopback interface, and that one down: every connect fails with "Network is unreachable") and a
PID namespace (the program's process 1 takes every descendant down with it). The probe tries the full set
and then smaller ones, and keeps the first that starts ``true``.

Process count. ``RLIMIT_NPROC`` counts all processes of the user and root is exempt from it, so as root it
stops nothing. A ``pids`` cgroup has no such exemption: when the cgroup hierarchy is writable (root, or a
delegated cgroup v2 subtree) each sandbox gets its own cgroup with ``pids.max``, and is killed and removed
afterwards. Stale cgroups of dead eval752 processes are removed by the probe.
"""
from __future__ import annotations

import functools
import itertools
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

_NS_CANDIDATES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"), ("userns", "netns", "pidns")),
    (("--net", "--pid", "--fork", "--kill-child"), ("netns", "pidns")),
    (("--user", "--map-root-user", "--net"), ("userns", "netns")),
    (("--net",), ("netns",)),
)
_PREFIX = "eval752-"
_counter = itertools.count()


@functools.lru_cache(maxsize=1)
def namespaces() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(unshare argv prefix, mechanism names)``; ``((), ())`` when no namespace can be made here."""
    binary = shutil.which("unshare") or next((p for p in ("/usr/bin/unshare", "/bin/unshare") if os.path.exists(p)),
                                             None)
    true = shutil.which("true") or "/bin/true"
    if binary is None:
        return (), ()
    for flags, names in _NS_CANDIDATES:
        try:
            done = subprocess.run([binary, *flags, true], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=10, env={})
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return (binary, *flags), names
    return (), ()


def _own_cgroup_paths() -> dict[str, str]:
    """Controller (or "" for cgroup v2) -> this process's cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _writable_pids_root() -> Path | None:
    own = _own_cgroup_paths()
    candidates = []
    if "pids" in own:
        candidates.append(Path("/sys/fs/cgroup/pids") / own["pids"].lstrip("/"))
    if "" in own:
        v2 = Path("/sys/fs/cgroup") / own[""].lstrip("/")
        try:
            if "pids" in (v2 / "cgroup.subtree_control").read_text().split():
                candidates.append(v2)
        except OSError:
            pass
    for base in candidates:
        probe = base / f"{_PREFIX}probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        ok = (probe / "pids.max").exists() and (probe / "cgroup.procs").exists()
        try:
            probe.rmdir()
        except OSError:
            pass
        if ok:
            return base
    return None


def _remove_stale(base: Path) -> None:
    for stale in base.glob(f"{_PREFIX}*"):
        try:
            owner = int(stale.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            try:
                stale.rmdir()
            except OSError:
                pass


@functools.lru_cache(maxsize=1)
def pids_cgroup_root() -> Path | None:
    """A cgroup folder under which this process may create ``pids`` cgroups, or None."""
    base = _writable_pids_root()
    if base is not None:
        _remove_stale(base)
    return base


class PidsCgroup:
    """One sandbox's ``pids`` cgroup: at most ``max_pids`` processes; ``close`` kills them and removes it."""

    def __init__(self, root: Path, max_pids: int) -> None:
        self.path = root / f"{_PREFIX}{os.getpid()}-{next(_counter)}"
        self.path.mkdir()
        try:
            (self.path / "pids.max").write_text(str(int(max_pids)))
            self.procs_fd = os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            self.path.rmdir()
            raise

    @classmethod
    def create(cls, max_pids: int) -> "PidsCgroup | None":
        root = pids_cgroup_root()
        if root is None:
            return None
        try:
            return cls(root, max_pids)
        except OSError:
            return None

    def join(self) -> None:
        """Move the calling process in (called in the child between fork and exec)."""
        os.write(self.procs_fd, str(os.getpid()).encode())

    def members(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def close(self, timeout_s: float = 5.0) -> None:
        """Kill every process still inside, then remove the cgroup (retrying while the kernel reaps)."""
        if self.procs_fd >= 0:
            os.close(self.procs_fd)
            self.procs_fd = -1
        deadline = time.monotonic() + timeout_s
        while True:
            for pid in self.members():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.005)


def is_root() -> bool:
    return os.geteuid() == 0


def user_process_count() -> int:
    """How many processes the current real user runs now (what RLIMIT_NPROC counts)."""
    uid = os.getuid()
    n = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def available_isolation(network: bool = False) -> list[str]:
    """The mechanisms a sandbox started now would have (the same list ``SandboxResult.isolation`` gives)."""
    names = ["tmpdir", "rlimits", "clean-env", "process-group"]
    _, ns = namespaces()
    names += [n for n in ns if n != "netns" or not network]
    if not network and "netns" not in ns:
        names.append("socket-guard")
    if pids_cgroup_root() is not None:
        names.append("pids-cgroup")
    if not is_root():
        names.append("nproc-rlimit")
    return names
