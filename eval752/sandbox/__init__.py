"""Sandboxed execution of untrusted Python code (model-written programs and their tests).

``run_sandboxed(source)`` runs a program in a separate process and reports how it ended as a
``SandboxResult``; ``arun_sandboxed`` is the same for asyncio. What holds the program in:

- a fresh temporary working folder, deleted afterwards ("tmpdir");
- resource limits: CPU seconds, address space, file size, no core files ("rlimits");
- an environment of only PATH, LANG and PYTHONHASHSEED, stdin closed ("clean-env");
- its own session, killed as a group at the wall-clock limit ("process-group");
- when util-linux ``unshare`` works here: a user namespace ("userns": no root needed, and other
  processes' /proc/<pid>/environ become unreadable), a network namespace with no usable interface
  ("netns") and a PID namespace whose end kills every descendant ("pidns");
- a pids cgroup capping the number of processes when the cgroup tree is writable ("pids-cgroup");
  RLIMIT_NPROC when not root ("nproc-rlimit"; root is exempt from it);
- without a network namespace, a Python-level guard on sockets ("socket-guard"), which stops honest code
  only.

Not isolated: the file system. The program runs as the calling user (mapped to root in its user namespace
when the caller is root) and can read and write whatever that user can. Run evaluations of untrusted code
as an unprivileged user or in a container.
"""
from .launch import DEFAULT_MAX_OUTPUT_BYTES, MAX_CONCURRENT, SANDBOX_ENV, arun_sandboxed, run_sandboxed
from .probe import available_isolation
from .result import STATUSES, SandboxResult

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "MAX_CONCURRENT",
    "SANDBOX_ENV",
    "STATUSES",
    "SandboxResult",
    "arun_sandboxed",
    "available_isolation",
    "run_sandboxed",
]
