"""A study's stdio server under hostile input: started as its design declares, spoken to line by line with no SDK
in between, every line of its stdout and stderr watched, and started afresh after it crashes or hangs."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Mapping

import psutil

from wismo.checks.findings import Exchange, has_traceback, tail
from wismo.checks.frames import GRACE_S, Owed, stdout_problem
from wismo.checks.target import Target
from wismo.core.errors import WismoError
from wismo.core.processes import piped
from wismo.mcp.client.raw import INITIALIZED, RawServer, initialize, line, read_line, rest

DEADLINE_S = 10.0  # for the answers to one case and its normal call: a server silent this long has hung
START_DEADLINE_S = 30.0  # for a fresh server's handshake: a start is no hostile case, and a busy machine slows it
EXIT_DEADLINE_S = 5.0  # for a server to exit once its input ends (then it is stopped)
CRASH_WAIT_S = 2.0  # for a server that closed its stdout to finish exiting, so its exit code is known
INIT_ID = "hostile-initialize"


class StdioPeer:
    """One design's stdio server, a raw client's process (its stderr in a file), under hostile input."""

    def __init__(self, target: Target, deadline_s: float = DEADLINE_S) -> None:
        self.target, self.deadline_s = target, deadline_s
        self.restarts = 0
        self.peak_rss_mb = 0.0
        self.broken = False  # crashed or hung: replaced before the next case, once the finding is recorded
        self._start()

    def _start(self) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process; closed with it
        self.checked = 0  # stderr bytes already looked at
        try:
            where = self.target.address
            self.raw = RawServer(
                self.target.design, where.process_env(), where.cwd or "/", where.argv(), stderr_file=self.stderr
            )
        except OSError as exc:
            self.stderr.close()
            raise PeerUnusable(self.target.design, f"its command could not be started ({exc})") from None
        opened = self.exchange(line(initialize(request_id=INIT_ID)), [INIT_ID], replace=False, starting=True)
        if opened.failure or "result" not in opened.answers.get(INIT_ID, {}):
            what = opened.what or f"it answered initialize with {str(opened.answers.get(INIT_ID))[:200]}"
            self._end()
            raise PeerUnusable(self.target.design, what, opened.failure or "crash")
        self._write(line(INITIALIZED))

    @property
    def proc(self) -> subprocess.Popen[bytes]:
        """The server's process."""
        return self.raw.proc

    def _write(self, data: bytes) -> None:
        self.raw.send_bytes(data, self.deadline_s)

    def exchange(
        self, data: bytes, wanted: list[str], replace: bool = True, starting: bool = False, owed: Owed | None = None
    ) -> Exchange:
        """Send `data` (whole lines, or a partial one) and read stdout until every id in `wanted` is answered, the
        deadline passes (a hang) or stdout closes (a crash); a crashed or hung server is replaced before the next
        exchange (unless not to `replace`: the handshake of a fresh one, `starting`, which has START_DEADLINE_S).
        With `owed`, every message read is given to it, and once `wanted` is answered reading goes on for GRACE_S
        until what the frame is owed has come."""
        if self.broken:
            self.replace()
        got = Exchange()
        wait = max(self.deadline_s, START_DEADLINE_S) if starting else self.deadline_s
        deadline = time.monotonic() + wait
        graced = False
        try:
            self._write(data)
            while not all(w in got.answers for w in wanted) or (owed is not None and not owed.settled()):
                if owed is not None and not graced and all(w in got.answers for w in wanted):
                    deadline, graced = min(deadline, time.monotonic() + GRACE_S), True
                raw = read_line(piped(self.proc.stdout), max(0.0, deadline - time.monotonic()))
                message, _ = stdout_problem(raw)
                if message is None:
                    if raw.strip():
                        got.stray.append(raw)
                    continue
                if owed is not None:
                    owed.take(message)
                ident = message.get("id")
                if "method" not in message and isinstance(ident, str) and ident in wanted:
                    got.answers[ident] = message
        except TimeoutError:
            if not graced:  # else everything awaited came, only not what the frame was owed (owed.verdict says so)
                got.failure, got.what = "hang", f"no answer within {wait:g} s"
        except (EOFError, OSError):
            got.failure, got.what = "crash", self._crashed()
        got.traceback = self._stderr_traceback()
        self.broken = bool(got.failure) and replace
        return got

    def _crashed(self) -> str:
        """The sentence for a server that closed its output: its exit code and the end of its stderr."""
        try:
            code: int | None = self.proc.wait(CRASH_WAIT_S)
        except subprocess.TimeoutExpired:
            code = None
        self.stderr.seek(self.checked)  # what it wrote while it handled this case, else the end of all it wrote
        said = tail(self.stderr.read().decode("utf-8", "replace")) or tail(self._stderr_text())
        ended = f"the server exited with code {code}" if code is not None else "the server closed its stdout"
        return ended + (f"; its stderr ends with: {said}" if said else "; its stderr is empty")

    def _stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def _stderr_traceback(self) -> str | None:
        """The end of stderr when what the server wrote there since the last look carries a stack trace."""
        self.stderr.seek(self.checked)
        new = self.stderr.read()
        self.checked += len(new)
        return tail(self._stderr_text()) if has_traceback(new.decode("utf-8", "replace")) else None

    def sample(self) -> None:
        """Read the server's resident memory (its children's too) into the peak."""
        try:
            process = psutil.Process(self.proc.pid)
            rss = process.memory_info().rss + sum(c.memory_info().rss for c in process.children(recursive=True))
        except psutil.Error:
            return
        self.peak_rss_mb = max(self.peak_rss_mb, round(rss / 2**20, 1))

    def calls(self, messages: list[dict[str, object]], starting: bool = False) -> Exchange:
        """Requests sent together, each awaited by its id (`starting`: before the first case, on the start's
        deadline)."""
        return self.exchange(b"".join(line(m) for m in messages), [request_id(m) for m in messages], starting=starting)

    def replace(self) -> None:
        """Stop this server and start a fresh one (PeerUnusable when it cannot be used)."""
        self.broken = False
        self._end()
        self.restarts += 1
        self._start()

    def _end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(CRASH_WAIT_S)
        for stream in (piped(self.proc.stdin), piped(self.proc.stdout)):
            try:
                stream.close()
            except OSError:
                pass  # a pipe the dead server left half written
        self.stderr.close()

    def finish(self, partial: bytes = b"") -> tuple[int | None, Exchange]:
        """Send `partial` (half a frame), close stdin and wait for the exit: its code (None: it did not exit in
        time and was stopped), and what stdout and stderr showed meanwhile."""
        if self.broken:
            self.replace()
        got = Exchange()
        try:
            self._write(partial)
            piped(self.proc.stdin).close()
            code: int | None = self.proc.wait(EXIT_DEADLINE_S)
        except (OSError, subprocess.TimeoutExpired):
            code = self.proc.poll()
        for raw in (rest(piped(self.proc.stdout)) if code is not None else b"").splitlines():
            if raw.strip() and stdout_problem(raw)[0] is None:
                got.stray.append(raw)
        got.traceback = self._stderr_traceback()
        self._end()
        return code, got


def request_id(message: Mapping[str, object]) -> str:
    """The id of a request the pass sends: always a string (framegen.PROBE's or a case's, and a number)."""
    ident = message["id"]
    if not isinstance(ident, str):
        raise TypeError(f"not an id the pass gives its requests: {ident!r}")
    return ident


class PeerUnusable(WismoError, RuntimeError):
    """A server that cannot be used (no handshake, no tools, no answer to the normal call, at the start or after a
    restart): `design`, `what` happened instead, and its `category` of finding; the pass says so and stops there."""

    def __init__(self, design: str, what: str, category: str = "crash") -> None:
        super().__init__(f"the {design} server could not be used: {what}")
        self.design, self.what, self.category = design, what, category
