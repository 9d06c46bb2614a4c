"""Server processes forked from one process that has already imported the MCP SDK, for the test suite.

A server's start is almost all imports (the SDK's protocol models, its transports): about 1 s of CPU each, and the
suite starts hundreds. Here one zygote process imports them once; `launcher()` writes an executable that the suite
names as the interpreter of its servers (`WISMO_PYTHON`, which `wismo.core.processes.interpreter()` reads). When a
client runs `launcher -m MODULE ...` or `launcher SCRIPT.py ...`, the launcher hands its stdin, stdout, stderr (and
an `--http-fd` socket) to the zygote over a Unix socket; the zygote forks, and the child runs the server on those
very file descriptors, in the launcher's working folder and environment. The client talks to the server over the
same pipes, with the same SDK, as to any server process; only the imports were done before the fork.

The launcher stands in for the server process: it forwards the signals it gets to the server and exits as the
server did (the same code, or the same signal). If the launcher is killed outright, the zygote kills the server.
Any other command line, or a zygote that cannot be reached, runs the real interpreter in the launcher's place.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import threading
import traceback
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

MAX_HEADER = 1 << 20
READY = b"ready\n"

# What every server here imports (wismo's servers, the SDK's low-level and high-level servers, both transports), and
# what the `wismo` commands the tests run import (the SDK's clients, papermill, tiktoken), and a notebook kernel's
# (ipykernel's kernel, but not its kernelapp, whose settings read the environment as the class is defined; numpy,
# pandas and matplotlib come after, in `_preload_kernel_libraries`).
PRELOAD = (
    "wismo.cli",
    "wismo.mcp.client.connection",
    "wismo.reports.render.build",
    "wismo.accounting.tokens",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "papermill",
    "ipykernel.ipkernel",
    "wismo.mcp.servers.app",
    "wismo.mcp.servers.stdio_fast",
    "mcp.server.lowlevel.server",
    "mcp.server.runner",
    "mcp.server.connection",
    "mcp.server.stdio",
    "mcp.server.streamable_http_manager",
    "mcp.server.mcpserver",
    "mcp.shared.jsonrpc_dispatcher",
    "mcp_types",
    "uvicorn",
)

LAUNCHER = '''#!{python} -IS
"""Run a server forked by the test suite's zygote (tests/forkserver.py), else the real interpreter."""
import json, os, signal, socket, sys

REAL, ADDRESS = {python!r}, {address!r}
args = sys.argv[1:]


def real():
    os.execv(REAL, [REAL] + args)


served = (len(args) >= 2 and args[0] == "-m") or (bool(args) and args[0].endswith(".py") and os.path.isfile(args[0]))
if not served:
    real()
fds = [0, 1, 2]
try:
    for fd in fds:
        os.fstat(fd)
except OSError:  # a closed stdin, stdout or stderr: the socket below would take its number
    real()
if "--http-fd" in args[:-1]:
    try:
        fds.append(int(args[args.index("--http-fd") + 1]))
        os.fstat(fds[-1])
    except (ValueError, OSError):  # not a descriptor we hold: the server's own refusal, from the real interpreter
        real()
header = json.dumps({{"argv": args, "cwd": os.getcwd(), "env": dict(os.environ), "fds": fds}}).encode()
channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    channel.connect(ADDRESS)
    socket.send_fds(channel, [header], fds)
    pid = int(channel.recv(64))
except (OSError, ValueError) as failure:
    channel.close()
    # Noted for the suite to report (conftest.forked_servers): a zygote that stopped answering would otherwise only
    # make every later server slow.
    with open(ADDRESS + ".missed", "a") as missed:
        missed.write(f"{{' '.join(args)}}: {{failure!r}}\\n")
    real()


def forward(signum, _frame):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGCONT, signal.SIGUSR1):
    signal.signal(signum, forward)
# The server holds the pipes now: our copies must not keep them open once it has gone.
null = os.open(os.devnull, os.O_RDWR)
for fd in fds:
    if fd != 2:
        os.dup2(null, fd)
said = channel.recv(64)
if not said.startswith(b"exit "):
    sys.stderr.write("forkserver: the zygote went away before the server ended\\n")
    os._exit(1)
status = int(said[5:])
if os.WIFSIGNALED(status):
    died_by = os.WTERMSIG(status)
    if died_by not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
        signal.signal(died_by, signal.SIG_DFL)
    os.kill(os.getpid(), died_by)
    os._exit(128 + died_by)
os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
'''


def launcher(folder: Path, address: str, python: str = sys.executable) -> Path:
    """Write the launcher for the zygote listening at `address` into `folder`; returns its path."""
    path = folder / "python"
    path.write_text(LAUNCHER.format(python=python, address=address))
    path.chmod(0o755)
    return path


def kernelspec(folder: Path, launcher: Path) -> Path:
    """A Jupyter data folder whose `python3` kernel is started by `launcher` (so forked from the zygote), with the
    installed kernel's settings otherwise; name it in JUPYTER_PATH, which Jupyter reads before its own folders."""
    from jupyter_client.kernelspec import KernelSpecManager

    installed = KernelSpecManager().get_kernel_spec("python3")
    spec = {**installed.to_dict(), "argv": [str(launcher), *installed.argv[1:]]}
    kernel = folder / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps(spec, indent=1))
    return folder


def _preload_kernel_libraries() -> None:
    """What every notebook kernel imports (about 0.8 s of CPU each): numpy with its BLAS on one thread, since a pool
    started as it loads would make the fork unsafe (the kernels compute on small tables), then pandas and pyplot, read
    with no MPLBACKEND, so that each child applies its own (`_backend_as_imported`)."""
    from wismo.core.environ import temporary_env

    with temporary_env(OPENBLAS_NUM_THREADS="1", MPLBACKEND=""):  # matplotlib ignores an empty MPLBACKEND
        import matplotlib.pyplot  # noqa: F401
        import numpy  # noqa: F401
        import pandas  # noqa: F401


INLINE = "module://matplotlib_inline.backend_inline"  # what ipykernel names in MPLBACKEND as it starts, if none is set


def _backend_as_imported(argv: list[str]) -> None:
    """matplotlib reads MPLBACKEND as it is imported: the child's, not the zygote's, as if it imported it now. A
    kernel with none gets the one ipykernel names as it starts (INLINE), which a later import would have read."""
    import matplotlib

    backend = os.environ.get("MPLBACKEND")
    if not backend and argv[:2] == ["-m", "ipykernel_launcher"]:
        backend = INLINE
    if backend:
        matplotlib.rcParams["backend"] = backend


def _run(argv: list[str]) -> int:
    """Run a server's command line (`-m MODULE ...` or `SCRIPT.py ...`) in this process; returns its exit code."""
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(os.path.abspath(argv[0]), run_name="__main__")
        return 0
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        return -signal.SIGINT  # the interpreter ends by SIGINT itself, once it has shut down
    except BaseException:
        sys.excepthook(*sys.exc_info())
        return 1


def _child(request: dict, fds: list[int], own: list[int]) -> None:
    """In the forked child: take the launcher's file descriptors, folder and environment, run the server, exit."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCONT, signal.SIGUSR1):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())  # the zygote blocks SIGTERM around its fork
    os.setsid()  # a session of its own, as the SDK starts a server: no signal to a sibling's group reaches it
    for fd in own:
        os.close(fd)
    high = [_out_of_the_way(fd) for fd in fds]
    for fd in fds:
        os.close(fd)
    for target, fd in zip(request["fds"], high, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _backend_as_imported(request["argv"])
    code = _run(request["argv"])
    # The interpreter's own order at exit: wait for non-daemon threads, run atexit, flush.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _out_of_the_way(fd: int) -> int:
    """A duplicate of `fd` numbered 256 or above, out of the way of any descriptor the server is handed."""
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD, 256)


def serve(address: str, owner: int) -> None:
    """The zygote: import what servers need, listen at `address`, and fork a server for each launcher, until the
    process `owner` ends. It leaves its parent first: a test that stops every process below the suite's own
    (processes.stop_descendants) must not stop it."""
    import importlib

    if os.fork():
        os._exit(0)
    os.setsid()
    watched = os.pidfd_open(owner)
    for name in PRELOAD:
        importlib.import_module(name)
    _preload_kernel_libraries()
    importlib.import_module(
        "wismo.accounting.tokens.encodings"
    ).encoding()  # the default encoding, read from its package
    gc.freeze()  # what the imports made stays put: the children's collections leave those pages shared
    # A fork copies only the thread that calls it: with another thread alive, a child could inherit a held lock.
    threads = os.listdir("/proc/self/task")
    if len(threads) != 1:
        raise RuntimeError(f"the zygote must have one thread before it forks; it has {len(threads)}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    selector.register(watched, selectors.EVENT_READ, "owner")
    children: dict[int, Child] = {}

    zygote = os.getpid()

    def stop(_signum: int, _frame: object) -> None:
        if os.getpid() != zygote:  # a child between its fork and its own handlers: not ours to act on
            os._exit(128 + signal.SIGTERM)
        for pid in children:
            _kill(pid)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    sys.stdout.buffer.write(READY + b"%d\n" % os.getpid())
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    while True:
        for key, _ in selector.select():
            if key.data == "owner":
                stop(0, None)
            if key.data is None:
                try:
                    _fork(listener, selector, children, watched)
                except Exception:  # one launcher's failure (it runs the real interpreter) must not end the zygote
                    traceback.print_exc()
                continue
            what, pid = key.data
            child = children.get(pid)
            if child is None:
                continue
            if what == "exited":
                _, status = os.waitpid(pid, 0)
                del children[pid]
                selector.unregister(child.pidfd)
                os.close(child.pidfd)
                if child.watched:
                    selector.unregister(child.channel)
                    with suppress(OSError):
                        child.channel.send(b"exit %d" % status)
                child.channel.close()
            elif child.watched:  # the launcher's channel only becomes readable as it closes: the launcher is gone
                selector.unregister(child.channel)
                child.watched = False
                _kill(pid)


@dataclass
class Child:
    """A forked server: its pidfd (readable once it exits) and its launcher's channel (readable once that closes)."""

    pidfd: int
    channel: socket.socket
    watched: bool = True


def _kill(pid: int) -> None:
    """SIGKILL a server that has not been reaped yet (so its pid cannot have been reused)."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _fork(listener: socket.socket, selector: selectors.BaseSelector, children: dict, owner: int) -> None:
    """Take one launcher's request and fork its server."""
    channel, _ = listener.accept()
    channel.settimeout(5)  # a launcher that connects and says nothing must not stall every other one
    fds: list[int] = []
    try:
        data, fds, flags, _addr = socket.recv_fds(channel, MAX_HEADER, 16)
        request = json.loads(data)
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(fds) != len(request["fds"]):
            raise ValueError("the request or its file descriptors were cut short")
        channel.settimeout(None)
    except Exception:
        for fd in fds:
            os.close(fd)
        channel.close()  # the launcher runs the real interpreter instead
        return
    own = [listener.fileno(), channel.fileno(), selector.fileno(), owner]  # type: ignore[attr-defined]
    own += [fd for c in children.values() for fd in (c.pidfd, c.channel.fileno())]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # the zygote's stop must never run in a child
    pid = os.fork()
    if pid == 0:
        try:
            _child(request, fds, own)
        except BaseException:  # never back into the zygote's loop, whatever failed
            traceback.print_exc()
        os._exit(1)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    children[pid] = Child(pidfd, channel)
    selector.register(pidfd, selectors.EVENT_READ, ("exited", pid))
    selector.register(channel, selectors.EVENT_READ, ("launcher", pid))
    with suppress(OSError):  # a launcher gone already: its channel reads as closed, and the server is killed
        channel.send(b"%d" % pid)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
