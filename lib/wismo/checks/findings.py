"""What counts as a finding when a study's servers get hostile input, declared once: the categories, each with the
sentence that defines it, what is not a finding, and how a finding records its facts (the design, where, the input
shortened, what happened)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TypedDict

from wismo.core.jsonfmt import canonical
from wismo.core.reading import Reading
from wismo.studies import matching

# The faults a server shows under hostile input. A finding is shown in the report, never a failed run: the server
# is restarted where wismo started it, and the pass goes on.
CATEGORIES = {
    "crash": "the server's process ended (over stdio), or the server stopped taking connections (over HTTP), during "
    "a case or before the normal call after it was answered; the exit code and the end of its stderr are kept",
    "hang": "no answer to the case, or to the normal call sent after it, within the deadline (an HTTP request whose "
    "framing is broken may be left waiting, as HTTP allows); a server wismo started is stopped",
    "traceback": "a stack trace (Python's 'Traceback (most recent call last)' or JavaScript's '    at f (file:1:2)' "
    "lines) in an answer or on the server's stderr: an error the server did not handle",
    "server error": "an HTTP answer with a 5xx status",
    "changed answer": "the normal call after a case was answered with other text than the first time it was asked, "
    "or with an error",
    "stray output": "a line on the server's stdout that is not a JSON-RPC message (stdout is the protocol's channel)",
    # What wismo's own servers promise besides (a design the study has wismo serve); no other server is judged so.
    "protocol": "a frame not answered as JSON-RPC asks: a request without exactly one answer, a line that is no "
    "message without exactly one error with id null, an answer with an id nobody asked for (wismo's own servers)",
    "unclear error": "a tool error that is not one sentence: one line, a full stop at its end, no stack trace, at "
    "most 400 characters (wismo's own servers)",
    "over memory": "the server's resident memory over its limit, or abandoned sessions growing it past their bound "
    "(wismo's own servers)",
    "unclean exit": "a server that does not exit with code 0, quietly, when its input ends or when told to stop "
    "(SIGTERM) (wismo's own servers)",
}
STRICT = ("protocol", "unclear error", "over memory", "unclean exit")  # judged on wismo's own servers only
# Said beside the categories: what a server nobody here wrote may do without it being a fault.
NOT_FINDINGS = (
    "Not findings: a tool error or a JSON-RPC error for invalid input (the refusal a client can act on), a normal "
    "result for invalid input (a server nobody here wrote may accept what wismo's own would refuse), an HTTP 4xx, and "
    "a malformed line left unanswered (many MCP SDKs drop a line they cannot parse)."
)
# Python's traceback header, or a JavaScript stack frame: "    at name (file:line:column)" or "    at file:line:column".
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s+at \S.*:\d+:\d+\)?\s*$", re.M)
MAX_FAULTS = 3  # crashes and hangs at one tool or kind of case, after which its remaining cases are skipped
SHOWN_CHARS = 100  # of an input in a finding: enough to tell it, short enough for a table
TAIL_CHARS = 300  # of a server's stderr in a finding


def one_sentence(text: str) -> bool:
    """A clear error: one line, ends with a full stop, no traceback, not absurdly long."""
    return "\n" not in text and text.endswith(".") and "Traceback" not in text and len(text) <= 400


def has_traceback(text: str) -> bool:
    """Whether a text carries a stack trace."""
    return bool(TRACEBACK.search(text))


def texts(message: dict[str, object]) -> str:
    """Every text a JSON-RPC answer carries, as written (JSON would escape the line breaks a stack trace is made of):
    its content blocks' texts, or its error's message and data."""
    result, error = message.get("result"), message.get("error")
    if isinstance(result, dict):
        blocks = result.get("content") or []
        return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
    if isinstance(error, dict):
        data = error.get("data")
        return f"{error.get('message', '')}\n{data if isinstance(data, str) else canonical(data)}"
    return ""


def shortened(value: object) -> str:
    """An input as a finding shows it: JSON (bytes as Python shows them), cut after SHOWN_CHARS with its length."""
    if isinstance(value, bytes):
        text, size, unit = repr(value[: SHOWN_CHARS + 1]), len(value), "bytes"
    else:
        text = json.dumps(value, ensure_ascii=True)  # control and bidirectional characters escaped, safe to show
        size, unit = len(text), "characters"
    return text if size <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({size:,} {unit})"


def tail(text: str) -> str:
    """The end of what a server wrote on stderr, on one line."""
    return " ".join(text.split())[-TAIL_CHARS:]


class Finding(TypedDict):
    """One finding of a hostile pass: its category, design, part and place, the first input that showed it
    (shortened), what happened then, and how many cases showed it."""

    category: str
    design: str
    part: str
    where: str
    input: str
    what: str
    cases: int


def finding(category: str, design: str, part: str, where: str, value: object, what: str) -> Finding:
    """One finding: its category (CATEGORIES), the design, the part of the pass (arguments, frames, http), where
    (a tool, a kind of frame or of request), the first input that showed it (shortened) and what happened then in
    one sentence, and how many cases showed it."""
    if category not in CATEGORIES:
        raise KeyError(f"not a category of finding: {category!r}")
    return {
        "category": category,
        "design": design,
        "part": part,
        "where": where,
        "input": shortened(value),
        "what": what,
        "cases": 1,
    }


def by_category(findings: list[Finding], strict: bool = True) -> dict[str, int]:
    """How many cases showed each category of finding (every category named, zero included; wismo's own servers'
    only when `strict`, some design being judged by them)."""
    return {c: sum(f["cases"] for f in findings if f["category"] == c) for c in categories(strict)}


def categories(strict: bool) -> dict[str, str]:
    """The categories of finding a pass judges by: wismo's own servers' promises too when `strict`."""
    return {c: meaning for c, meaning in CATEGORIES.items() if strict or c not in STRICT}


@dataclass
class Exchange:
    """What came back for one case: the answers awaited (by id), the stdout lines that are not JSON-RPC, whether the
    server crashed or hung (and the sentence saying so), the end of stderr when it showed a stack trace, and the HTTP
    status of the case (over HTTP)."""

    answers: dict[str, dict[str, object]] = field(default_factory=dict)
    stray: list[bytes] = field(default_factory=list)
    failure: str | None = None  # "crash" or "hang"
    what: str = ""
    traceback: str | None = None
    traceback_in: str = "the server's stderr"  # where the stack trace was: stderr over stdio, an answer over HTTP
    status: int | None = None


def outcome(message: dict[str, object]) -> str:
    """How a server answered a case: a result, a tool error (isError) or a JSON-RPC error."""
    if "result" not in message:
        return "protocolErrors"
    return "toolErrors" if isinstance(message["result"], dict) and message["result"].get("isError") else "results"


class Record:
    """The findings of one design's pass as they are made, and the crashes and hangs counted where they happened."""

    def __init__(
        self, design: str, baseline: str = "", ignore: tuple[str, ...] = (), reading: Reading | None = None
    ) -> None:
        self.design, self.baseline, self.ignore, self.reading = design, baseline, ignore, reading
        self.kept: dict[tuple[str, str, str], Finding] = {}
        self.faults: dict[tuple[str, str], int] = {}
        self.skipped = 0

    @property
    def findings(self) -> list[Finding]:
        """The findings in the order first made: one per category, part and place, with the cases that showed it."""
        return list(self.kept.values())

    def add(self, category: str, part: str, where: str, value: object, what: str) -> None:
        """One case's finding: the first of its category, part and place kept whole, later ones counted (crashes and
        hangs also counted against `where`)."""
        key = (category, part, where)
        if key in self.kept:
            self.kept[key]["cases"] += 1
        else:
            self.kept[key] = finding(category, self.design, part, where, value, what)
        if category in ("crash", "hang"):
            self.faults[(part, where)] = self.faults.get((part, where), 0) + 1

    def stopped(self, part: str, where: str) -> bool:
        """Whether `where` has crashed or hung MAX_FAULTS times: its remaining cases are skipped (and counted)."""
        if self.faults.get((part, where), 0) < MAX_FAULTS:
            return False
        self.skipped += 1
        return True

    def judge(
        self, got: Exchange, part: str, where: str, value: object, probe: str, case: str | None = None
    ) -> str | None:
        """Every finding one exchange shows; how the case itself was answered (outcome), when it was."""
        if got.failure:
            who = "the case" if case and case not in got.answers else "the normal call sent after it"
            self.add(got.failure, part, where, value, got.what if got.failure == "crash" else f"{who} got {got.what}")
        if got.stray:
            lines = f" ({len(got.stray)} such lines)" if len(got.stray) > 1 else ""
            self.add("stray output", part, where, value, f"stdout carried {shortened(got.stray[0])}{lines}")
        if got.traceback:
            said = f"{got.traceback_in} shows a stack trace, ending: {got.traceback}"
            self.add("traceback", part, where, value, said)
        if got.status is not None and got.status >= 500:
            self.add("server error", part, where, value, f"a request was answered with HTTP {got.status}")
        answered = got.answers.get(case) if case else None
        if answered is not None and has_traceback(texts(answered)):
            self.add("traceback", part, where, value, f"the answer carries a stack trace: {tail(texts(answered))}")
        normal = got.answers.get(probe)
        if normal is not None and answer_text(normal, self.ignore, self.reading) != self.baseline:
            self.add(
                "changed answer", part, where, value, f"the normal call was answered {shortened(answer_text(normal))}"
            )
        return outcome(answered) if answered is not None else None


def _text_without(text: object, ignore: tuple[str, ...]) -> object:
    """A text block as compared: as it is, or its JSON without the ignored keys when the study names some."""
    if not ignore or not isinstance(text, str):
        return text
    try:
        return canonical(matching.without(json.loads(text), ignore))
    except ValueError:
        return text


def answer_text(message: dict[str, object], ignore: tuple[str, ...] = (), reading: Reading | None = None) -> str:
    """What "the same answer" compares: the error flag and every content block of a result (text as it is, or, with
    keys to `ignore`, its value as the design reads it (`reading`, else JSON) without them), or the JSON-RPC error
    when there is one."""
    result = message.get("result")
    if not isinstance(result, dict):
        return "error: " + canonical(message.get("error"))
    content = result.get("content") or []
    if ignore and reading is not None and not result.get("isError"):
        found = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        try:
            value = reading.value(
                "\n".join(found), result.get("structuredContent"), found if len(content) > 1 else None
            )
        except Exception:  # a reading that fails on this answer (any way it can): compared as text below
            pass
        else:
            return canonical({"isError": False, "value": matching.without(value, ignore)})
    blocks = [
        _text_without(b.get("text"), ignore) if isinstance(b, dict) and b.get("type") == "text" else canonical(b)
        for b in content
    ]
    return canonical({"isError": bool(result.get("isError")), "content": blocks})
