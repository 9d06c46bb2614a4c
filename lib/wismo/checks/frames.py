"""What JSON-RPC owes a frame on a stdio server's wire, and what the lines that came back break of it: a request gets
exactly one answer (with its id, or an error with id null when its id is invalid), a line that is no request or
notification gets exactly one error with id null, a notification or a response gets nothing; no answer carries an id
nobody asked for, and every line on stdout is a JSON-RPC message. wismo's own servers keep all of it (the hostile
pass judges them by it, findings.STRICT); a server nobody here wrote owes only the last."""

from __future__ import annotations

import json

GRACE_S = 2.0  # for a frame's answer once the normal call sent after it has been answered
RSS_EVERY = 20  # cases between memory readings


def valid_id(value: object) -> bool:
    """A JSON-RPC id a request may carry here: a string or an integer (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def expect(line: bytes) -> tuple[str, object]:
    """What JSON-RPC asks for one line: ("request", its id or None when invalid): exactly one answer, with that id
    or an error with id null; ("error", None): exactly one error with id null; ("quiet", None): a notification or a
    response, answered with nothing (or at most one error with id null)."""
    try:
        value = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return "error", None
    if not isinstance(value, dict):
        return "error", None
    if "method" in value and "id" in value:
        return "request", value["id"] if valid_id(value["id"]) else None
    if "method" in value or "result" in value or "error" in value:
        return "quiet", None
    return "error", None


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b  # 1, 1.0 and true are different ids


def stdout_problem(line: bytes) -> tuple[dict[str, object] | None, str | None]:
    """A line from the server's stdout parsed, or the sentence saying it is not a JSON-RPC message."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        message = None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None, f"stdout carried a line that is not a JSON-RPC message: {line[:80]!r}."
    return message, None


class Owed:
    """The answers to one frame, sent with a normal call (`probe`, its id), taken one message at a time."""

    def __init__(self, frame: bytes, probe: str) -> None:
        self.want, self.frame_id = expect(frame)
        self.probe = probe
        self.probes = self.nulls = self.answers = 0
        self.problems: list[str] = []

    def take(self, message: dict[str, object]) -> None:
        """One JSON-RPC message the server wrote after the frame."""
        if "method" in message:
            return  # a notification from the server (a log line, say): no answer to anything
        ident = message.get("id")
        if ("result" in message) == ("error" in message) or "id" not in message:
            shown = json.dumps(message)[:80]
            self.problems.append(f"an answer without an id or without exactly one of result and error: {shown}.")
        elif _same(ident, self.probe):
            self.probes += 1
        elif isinstance(ident, str) and ident.startswith(self.probe.rstrip("0123456789")):
            pass  # a late answer to an earlier normal call: that exchange's, not this frame's
        elif ident is None:
            self.nulls += 1
            if "error" not in message:
                self.problems.append("a result with id null.")
        elif self.frame_id is not None and _same(ident, self.frame_id):
            self.answers += 1
        else:
            self.problems.append(f"an answer with an id nobody asked for (or answered twice): {str(ident)[:40]!r}.")

    def settled(self) -> bool:
        """Whether everything owed has come: the frame's answer when it needs one (the normal call's is awaited
        anyway)."""
        return self.want == "quiet" or self.nulls + self.answers >= 1

    def verdict(self) -> list[str]:
        """Every problem seen, and what was missing or too much once reading stopped."""
        problems = list(self.problems)
        if self.probes > 1:
            problems.append("the normal call was answered twice.")
        got = self.nulls + self.answers
        if self.want == "request" and got != 1:
            problems.append(f"the request got {got} answers, not one.")
        if self.want == "error" and self.nulls != 1:
            problems.append(f"the line got {self.nulls} errors with id null, not one.")
        if self.want == "quiet" and got > 1:
            problems.append(f"a notification or response got {got} answers.")
        return problems
