"""Python sources that run inside the sandbox, passed with ``-c``.

``INIT_SOURCE`` is process 1 of the sandbox's PID namespace. It runs the user program as its child,
waits for it and writes how it ended (``exit N`` or ``signal N``) to a status file descriptor, because
``unshare --fork`` loses some of that (util-linux 2.38 turns a child killed by SIGXCPU into exit code 1).
When process 1 exits, the kernel kills every process left in the namespace, so nothing the program
started outlives it.

``GUARD_SOURCE`` is the fallback for network isolation when no network namespace can be made: it replaces
the socket functions that reach out (connect, sendto, name resolution) with ones that raise, then runs the
script. It stops honest code that tries the network, not code that sets out to get around it (``_socket``
is still importable); ``SandboxResult.isolation`` says "socket-guard" so a reader knows which one held.
"""
from __future__ import annotations

INIT_SOURCE = r"""
import os, sys
fd = int(sys.argv[1])
argv = sys.argv[2:]
os.set_inheritable(fd, False)
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    except BaseException as exc:
        os.write(2, ("sandbox: cannot start %s: %s\n" % (argv[0], exc)).encode())
    os._exit(127)
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    os.write(fd, b"signal %d" % sig)
    code = 128 + sig
else:
    code = os.waitstatus_to_exitcode(status)
    os.write(fd, b"exit %d" % code)
os.close(fd)
os._exit(code & 0xFF)
"""

GUARD_MESSAGE = "network access is disabled in the sandbox"

GUARD_SOURCE = r"""
import socket as _socket_module, sys as _sys

def _network_disabled(*args, **kwargs):
    raise PermissionError(%r)

for _name in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(_socket_module.socket, _name, _network_disabled)
for _name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
    setattr(_socket_module, _name, _network_disabled)
del _name, _socket_module
_sys.argv = _sys.argv[1:]
import runpy as _runpy
_runpy.run_path(_sys.argv[0], run_name="__main__")
""" % GUARD_MESSAGE
