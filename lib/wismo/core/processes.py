"""The processes below this one, read from /proc (Linux), and how to stop them all at once; a block that SIGINT and
SIGTERM end by stopping them (Interrupted); a child that ends when the process that started it does; a child's pipe;
the interpreter that runs servers; an asyncio task that Ctrl-C cancels whichever thread receives it."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import IO, TypeVar

from wismo.core.errors import WismoError

GRACE_S = 2.0  # how long the stopped processes get to end on SIGTERM before they are killed
POLL_S = 0.02
PR_SET_PDEATHSIG = 1  # linux/prctl.h
STOPPING = (signal.SIGINT, signal.SIGTERM)
INTERPRETER_ENV = "WISMO_PYTHON"
T = TypeVar("T")


class Interrupted(WismoError, KeyboardInterrupt):
    """A block ended by a signal: `signum`, `exit_code` (128 + signum, as a shell reports it), `stopped` (the pids of
    the processes stopped with it) and `target` (what the interrupted work would have replaced, when given)."""

    def __init__(self, signum: int, stopped: frozenset[int] = frozenset(), target: object = None) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum
        self.exit_code = 128 + signum
        self.stopped = stopped
        self.target = target


def _parents() -> dict[int, int]:
    """The parent of every living process (zombies are over and left out), from /proc/PID/stat; empty without /proc."""
    found: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    # The command name may hold spaces and parentheses: the fields after it follow the last ")".
                    state, ppid = f.read().rsplit(b")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue  # ended meanwhile
            if state != b"Z":
                found[int(entry)] = int(ppid)
    return found


def descendants(pid: int | None = None) -> set[int]:
    """Every living process below `pid` (default this one): its children, theirs, and so on."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [os.getpid() if pid is None else pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, ValueError, IndexError):
        return False


def _send(pids: set[int], signum: int) -> None:
    """`signum` to each of `pids`, those that ended meanwhile skipped."""
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def stop_descendants(grace_s: float = GRACE_S) -> frozenset[int]:
    """Stop every process below this one and return their pids: each is frozen (SIGSTOP) as it is found until a
    new look finds no new one, so none can start another meanwhile, nor be orphaned out of reach; then all are sent
    SIGTERM and let run again, and those still running after `grace_s` (or started since) are killed."""
    frozen: set[int] = set()
    while new := descendants() - frozen:
        _send(new, signal.SIGSTOP)
        frozen |= new
    _send(frozen, signal.SIGTERM)
    _send(frozen, signal.SIGCONT)  # a stopped process acts on SIGTERM only once it runs again
    _wait_gone(frozen, grace_s)
    rest = {p for p in frozen if alive(p)} | descendants()
    _send(rest, signal.SIGKILL)
    _wait_gone(rest, grace_s)
    return frozenset(frozen | rest)


def _wait_gone(pids: set[int], limit_s: float) -> None:
    """Return once none of `pids` is running, or after `limit_s`."""
    end = time.monotonic() + limit_s
    while any(alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(POLL_S)


class Guard:
    """What `interruptible` hands its block: the signal that stopped it, if one did (`signum`, and `stopped`, the
    processes stopped with it), and `too_late()` or `too_late_from_here()`, the part a signal no longer stops."""

    def __init__(self) -> None:
        self.late = False
        self.signum: int | None = None
        self.stopped: frozenset[int] = frozenset()

    @contextmanager
    def too_late(self) -> Iterator[None]:
        """Inside, a signal is let pass and the block goes on: what runs here must not be cut in half, and it is
        done within milliseconds (the caller then ends as if no signal had come). Entered after a signal whose
        KeyboardInterrupt some code swallowed, it raises instead."""
        self.too_late_from_here()
        try:
            yield
        finally:
            self.late = False

    def too_late_from_here(self) -> None:
        """too_late() to the block's end, past the moment its handlers are put back: what follows must not be cut in
        half, nor be said stopped once it is done. After a swallowed KeyboardInterrupt's signal, it raises instead."""
        if self.signum is not None:
            raise KeyboardInterrupt
        self.late = True


@contextmanager
def interruptible(
    target: object = None, cleanup: Callable[[], None] | None = None, stop: bool = True
) -> Iterator[Guard]:
    """Inside the block, SIGINT or SIGTERM stops every process below this one (stop_descendants; unless not `stop`,
    where the block's own exits stop what it started, as a Dask cluster's close stops its workers in order) and raises
    KeyboardInterrupt where this thread is, which no `except Exception` can swallow; at the block's end, `cleanup`
    runs and Interrupted (naming `target`) is raised instead of whatever that became. The handlers before it are put
    back afterwards. Off the main thread, where Python cannot handle signals, the block runs unguarded."""
    guard = Guard()
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return

    def handle(signum: int, _frame: object) -> None:
        if guard.late or guard.signum is not None:  # too late, or a second Ctrl-C while the first is acted on
            return
        guard.signum = signum
        if stop:
            guard.stopped = stop_descendants()
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, handle) for s in STOPPING}
    try:
        yield guard
    except BaseException:
        if guard.signum is None:
            raise
        if cleanup is not None:
            cleanup()
        raise Interrupted(guard.signum, guard.stopped, target) from None
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def started_apart(start: Callable[[], T], close: Callable[[T], object]) -> T:
    """What `start()` returns, the processes it starts ignoring SIGINT, which they keep: a terminal sends Ctrl-C to
    every process of its group, and this one then stops them (through `close`) rather than each acting on it and
    printing its tracebacks. A Ctrl-C meanwhile is not seen; a SIGTERM is held and acted on once `start()` has
    returned, `close` first stopping what it started, so nothing is left half started. Off the main thread, where
    Python cannot handle signals, `start()` alone."""
    if threading.current_thread() is not threading.main_thread():
        return start()
    held: list[int] = []
    handlers = {signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN)}
    handlers[signal.SIGTERM] = signal.signal(signal.SIGTERM, lambda signum, _frame: held.append(signum))
    try:
        started = start()
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    try:
        for term in held:
            signal.raise_signal(term)
    except BaseException:
        close(started)
        raise
    return started


def piped(stream: IO[bytes] | None) -> IO[bytes]:
    """A child's stdin or stdout that was opened with subprocess.PIPE: Popen's types cannot know it is not None."""
    if stream is None:
        raise ValueError("the child's stream was not opened with subprocess.PIPE")
    return stream


def _ignore(_signum: int, _frame: object) -> None:
    """A handler that does nothing: unlike SIG_IGN, a program this process starts does not inherit it."""


def as_worker(parent: int) -> None:
    """For a worker process of `parent`, right after it started: Ctrl-C is for the parent to act on (it stops its
    workers itself), SIGTERM ends the worker (a fork copies the parent's handlers, interruptible's included), and
    the worker is killed when its parent ends, even by SIGKILL."""
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ends_with_parent(parent, signal.SIGKILL)()


def ends_with_parent(parent: int | None = None, signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A function to run in a new child process (subprocess's preexec_fn; `parent` defaults to the process calling
    this) that has Linux send the child `signum` when the thread that started it ends; a no-op elsewhere. ctypes is
    loaded here, before the fork, so the child only makes one system call."""
    parent = os.getpid() if parent is None else parent
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # the parent ended before the request was made: nobody would send the signal
            os.kill(os.getpid(), signum)

    return arm


def interpreter() -> str:
    """The interpreter that runs wismo's servers and `{python}` in a study's commands: this one, unless WISMO_PYTHON
    names another (the test suite names a launcher that forks servers from a process with the SDK imported)."""
    return os.environ.get(INTERPRETER_ENV) or sys.executable


async def interruptible_task(work: Callable[[], Awaitable[T]]) -> T:
    """Await `work()` in this asyncio task, which Ctrl-C cancels, then raising KeyboardInterrupt (a second Ctrl-C
    raises it at once), as asyncio.Runner's own handling does. Through the event loop's signal handler, unlike the
    Runner's: that one runs only once the loop's thread wakes, and a SIGINT the kernel gives to another of our
    threads (a worker's, the child watcher's) wakes nothing, so `wismo evaluate` went on until the model answered."""
    import asyncio

    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    assert task is not None
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        if interrupted:
            raise KeyboardInterrupt
        interrupted = True
        task.cancel()

    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:  # a run whose caller ignores Ctrl-C (a background job) keeps ignoring it
        return await work()
    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)  # the loop's wakeup fd: any thread's SIGINT wakes it
    except (NotImplementedError, RuntimeError, ValueError):  # no loop signal handlers here: the Runner's handling
        return await work()
    try:
        return await work()
    except asyncio.CancelledError:
        if interrupted and task.uncancel() == 0:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, previous)
