"""Hostile input on a study design reached over Streamable HTTP at a URL wismo did not start: hostile arguments in a
session (qa/study_args.py), then hostile requests of every kind http_abuse generates (bodies with and without a
session, headers, methods and paths, unknown sessions, broken framing, a body over 4 MiB), each followed by the
normal call in a session of its own.

Someone else's server is treated as a guest treats a house: no SIGTERM and no exit checks (it is not ours to stop),
no memory readings (its process is not ours to read), no slow or parallel clients, and no sessions abandoned by the
thousand. The pass opens two sessions (the normal client's, and the one the in-session cases use), and a new one only
when the server ends one (a DELETE case, or a 404 on it); it ends each with DELETE when it is done. A server that
stops taking connections cannot be restarted from here: that crash is the design's last finding, and its pass ends.
"""

from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlsplit

from wismo.checks.findings import Exchange, has_traceback, tail, texts
from wismo.checks.framegen import PROBE
from wismo.checks.fuzz import run_examples
from wismo.checks.hostile import per_kind
from wismo.checks.http_abuse import OVERSIZED_BODY, case_strategies, exchange, request
from wismo.checks.records import DesignReport, HttpReport
from wismo.checks.stdio_peer import PeerUnusable, request_id
from wismo.checks.study_args import Pass, arguments, design_report, each, finished
from wismo.checks.target import Target, withheld
from wismo.core.revision import PINNED_REVISION
from wismo.mcp.client.raw import INITIALIZED, initialize, line

INIT_ID = "hostile-initialize"
OVERSIZED = "oversized body"
# A request whose framing is broken may be left waiting for the rest (HTTP lets a server ignore blank lines before a
# request, and wait for the body a length announces): its silence is counted (-1), not a hang, after this long.
BROKEN = "broken framing"
BROKEN_WAIT_S = 2.0


def messages_in(content_type: str, body: bytes) -> list[dict[str, object]]:
    """The JSON-RPC messages of an answer: its JSON body, or the data of each event of an event stream."""
    if "text/event-stream" in content_type:
        events = body.decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n")
        texts = ["\n".join(x[5:].lstrip() for x in e.split("\n") if x.startswith("data:")) for e in events]
    else:
        texts = [body.decode("utf-8", "replace")]
    found = []
    for text in texts:
        try:
            value = json.loads(text)
        except ValueError:
            continue
        found += [m for m in (value if isinstance(value, list) else [value]) if isinstance(m, dict)]
    return found


class HttpPeer:
    """One session with a Streamable HTTP server at a URL: each request POSTed on a connection of its own."""

    restarts = 0  # never: a server wismo did not start is not restarted

    def __init__(self, target: Target, deadline_s: float) -> None:
        parts = urlsplit(target.address.url or "")
        self.design, self.deadline_s = target.design, deadline_s
        self.tls = parts.scheme == "https"
        self.host, self.port = parts.hostname or "", parts.port or (443 if self.tls else 80)
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.session: str | None = None
        self.version = PINNED_REVISION
        self.gone = False  # the server stopped taking connections
        self.opened = 0
        self.open()

    def _post(self, body: bytes, method: str = "POST") -> tuple[int, dict[str, str], bytes]:
        """One request: its status, headers (lower-case names) and body (OSError when there is no answer)."""
        kind = http.client.HTTPSConnection if self.tls else http.client.HTTPConnection
        conn = kind(self.host, self.port, timeout=self.deadline_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        headers["MCP-Protocol-Version"] = self.version
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        try:
            conn.request(method, self.path, body, headers)
            answer = conn.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            conn.close()

    def open(self) -> None:
        """A new session: initialize, then notifications/initialized (PeerUnusable when it is not opened)."""
        self.session = None
        try:
            status, headers, body = self._post(line(initialize(request_id=INIT_ID)).strip())
            answer = next((m for m in messages_in(headers.get("content-type", ""), body) if m.get("id") == INIT_ID), {})
            result = answer.get("result")
            if status != 200 or not isinstance(result, dict):
                raise PeerUnusable(self.design, f"initialize was answered with HTTP {status}: {body[:200]!r}")
            self.version = result.get("protocolVersion") or self.version
            self.opened += 1
            self.session = headers.get("mcp-session-id")  # none: a stateless server
            self._post(line(INITIALIZED).strip())
        except (OSError, http.client.HTTPException) as exc:
            raise PeerUnusable(self.design, f"the server could not be reached ({type(exc).__name__}: {exc})") from None

    def calls(self, messages: list[dict[str, object]], starting: bool = False) -> Exchange:
        """Requests in this session one by one, each awaited by its id; the session opened anew if the server ended
        it (404); a hang or a crash (no more connections taken) said. (`starting` changes nothing here: a server at
        a URL is already running.)"""
        if self.gone:
            raise PeerUnusable(self.design, "the server stopped taking connections after an earlier case")
        got = Exchange()
        for message in messages:
            try:
                status, headers, body = self._post(line(message).strip())
                if status == 404 and self.session:  # the server ended the session: a client opens a new one
                    self.open()
                    status, headers, body = self._post(line(message).strip())
            except TimeoutError:
                got.failure, got.what = "hang", f"no answer within {self.deadline_s:g} s"
                break
            except PeerUnusable as exc:
                self.gone = True
                got.failure, got.what = "crash", f"its session ended and a new one could not be opened: {exc.what}"
                break
            except (OSError, http.client.HTTPException) as exc:
                self.gone = True
                got.failure, got.what = "crash", f"the server stopped taking connections ({type(exc).__name__})"
                break
            if status >= 500 and got.status is None:
                got.status = status
            found = messages_in(headers.get("content-type", ""), body)
            for m in found:
                if m.get("id") == message["id"] and "method" not in m:
                    got.answers[request_id(message)] = m
            # A page that is not JSON-RPC (a 500's HTML) is read as it is; an answer, by the texts it carries.
            text = "\n".join(texts(m) for m in found) if found else body.decode("utf-8", "replace")
            if has_traceback(text) and got.traceback is None:
                got.traceback, got.traceback_in = tail(text), "an answer"
        return got

    def sample(self) -> None:
        """Nothing: the memory of a server wismo did not start is not its to read."""

    def close(self) -> None:
        """End the session (DELETE), as a client that is done does."""
        if self.session and not self.gone:
            try:
                self._post(b"", "DELETE")
            except (OSError, http.client.HTTPException):
                pass  # the server is going or gone: nothing left to end


def http_case(p: Pass[HttpPeer], peer: HttpPeer, kind: str, data: bytes, out: HttpReport) -> None:
    """One hostile request on a connection of its own, then the normal call; its status counted, findings recorded."""
    if withheld(data.partition(b"\r\n\r\n")[2], p.forbidden):
        out["withheld"] += 1
        return
    if p.record.stopped("http", kind):
        return
    out["cases"][kind] = out["cases"].get(kind, 0) + 1
    wait = min(peer.deadline_s, BROKEN_WAIT_S) if kind == BROKEN else peer.deadline_s
    try:
        status = exchange(peer.port, data, wait, peer.host)
    except OSError:
        status = 0  # refused: the normal call after it tells a crash from a connection the server would not take
    counts = out["statuses"].setdefault(kind, {})
    counts[str(status)] = counts.get(str(status), 0) + 1
    if status == -1 and kind != BROKEN:
        p.record.add("hang", "http", kind, data, f"the case got no answer within {peer.deadline_s:g} s")
    probe, normal = p.probe()
    got = peer.calls([normal])
    got.status = status if status >= 500 else got.status
    p.record.judge(got, "http", kind, data, probe)


def http_cases(p: Pass[HttpPeer], peer: HttpPeer, count: int, out: HttpReport) -> None:
    """Every kind of hostile request, `count` each, then one body over 4 MiB; the in-session cases in a session
    of their own."""
    cases_peer: list[HttpPeer] = []

    def session() -> str:
        if not cases_peer:
            cases_peer.append(HttpPeer(p.target, peer.deadline_s))
        return cases_peer[0].session or ""

    out |= {"cases": {}, "statuses": {}, "withheld": 0}
    try:
        made = case_strategies(p.target.normal_call(PROBE), peer.port, session, peer.host, peer.path)
        for kind, strategy in made.items():
            run_examples(count, strategy, each(lambda d, k=kind: http_case(p, peer, k, d, out)), generate_only=True)
        oversized = request(peer.port, body=b"[" * OVERSIZED_BODY, path=peer.path, host=peer.host)
        http_case(p, peer, OVERSIZED, oversized, out)
    finally:
        out["sessionsOpened"] = peer.opened + sum(c.opened for c in cases_peer)
        for c in cases_peer:
            c.close()


def http_design(target: Target, count: int, deadline_s: float) -> DesignReport:
    """The whole pass on one design at a URL: its report, with its time under `timings`."""
    started = time.perf_counter()
    peer = HttpPeer(target, deadline_s)
    try:
        p = Pass(target, peer)
        report = design_report(target, p.tools)
        sent: HttpReport = {"cases": {}, "statuses": {}, "withheld": 0, "sessionsOpened": 0, "leftOut": None}
        report["http"] = sent
        try:
            arguments(p, count, report["arguments"])
            if peer.tls:
                sent["leftOut"] = "raw hostile requests are plain HTTP/1.1; this server is reached over TLS"
            else:
                http_cases(p, peer, per_kind(count), sent)
        except PeerUnusable as exc:  # the server went away: not restarted from here, so the pass ends
            report["stoppedEarly"] = f"{exc}; the pass stopped there"
    finally:
        peer.close()
    return finished(report, p) | {"timings": {"seconds": round(time.perf_counter() - started, 1)}}
