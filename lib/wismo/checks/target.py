"""A study design as hostile input reaches it: how its server is started or found (a stdio command, a design wismo
serves over stdio, or a URL), the normal call (the design's entry call for the study's first case) and how its
answer is compared, the tools the pass may call, and the guard that keeps every other tool out of a hostile frame."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wismo.checks.findings import answer_text, shortened
from wismo.core.investigation import Investigation
from wismo.mcp.client.address import Address
from wismo.mcp.client.raw import tools_call

if TYPE_CHECKING:
    from wismo.studies.declaration import Study


@dataclass(frozen=True)
class Target:
    """One design under hostile input: where its server is, its investigation and the case fields of the normal
    call."""

    design: str
    investigation: Investigation
    fields: dict[str, object]
    address: Address  # a design wismo serves has its HTTP side started too; a URL is one wismo did not start
    ignore: tuple[str, ...] = ()  # object keys a changed answer is not judged by (a clock's, say)
    strict: bool = False  # judged by wismo's own servers' promises too (findings.STRICT)

    @property
    def tools(self) -> list[str]:
        """The tools the pass calls: those the investigation calls, and never any other."""
        return sorted(self.investigation.tools())

    def normal_arguments(self) -> dict[str, object]:
        """The arguments of the normal call: the entry's, filled from the study's first case."""
        return self.investigation.entry_arguments(self.fields)

    def normal_call(self, ident: str) -> dict[str, object]:
        """The normal call as a JSON-RPC request with id `ident`."""
        return tools_call(self.investigation.entry, self.normal_arguments(), ident)

    def bases(self, entry_answer: dict[str, Any]) -> dict[str, dict[str, object]]:
        """Real arguments for each tool the pass calls: the entry's, and for each linked tool its first call in the
        first case (read from the entry's answer), where the hostile arguments start from."""
        out = {self.investigation.entry: self.normal_arguments()}
        result = entry_answer.get("result") or {}
        texts = [b.get("text", "") for b in result.get("content", []) if isinstance(b, dict)]
        call = {"output": "".join(texts), "isError": bool(result.get("isError"))}
        call["structured"] = result.get("structuredContent")
        try:
            value = self.investigation.value_of(call)
            linked = self.investigation.linked_calls(value, self.fields) if value is not None else []
        except Exception:  # a reading that fails here (any way it can) leaves only the schema to start from
            linked = []
        for tool, arguments in linked:
            out.setdefault(tool, arguments)
        return out


def of_study(study: Study) -> list[Target]:
    """Every design of a study as a target, the reference first."""
    first = study.cases[0].fields
    out = []
    for name, d in study.designs.items():
        strict = d.address.serve is not None
        out.append(Target(name, d.investigation, first, d.address, study.ignored(name), strict))
    return out


class Normal:
    """A target's normal call, asked again and again, each answer judged by the first: the same, read as the design
    reads it (its ignored keys left out), and no error."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.first: str | None = None

    def call(self, ident: str | int) -> dict[str, object]:
        """The normal call as a JSON-RPC request with id `ident`."""
        return tools_call(self.target.investigation.entry, self.target.normal_arguments(), ident)

    def problem(self, message: dict[str, object]) -> str | None:
        """None when `message` answers the normal call as the first answer did; else one sentence saying how not."""
        result = message.get("result")
        if not isinstance(result, dict) or result.get("isError"):
            return f"the normal call was answered with an error: {shortened(message)}"
        text = answer_text(message, self.target.ignore, self.target.investigation.reading)
        if self.first is None:
            self.first = text
        return None if text == self.first else f"the normal call was answered otherwise than first: {shortened(text)}"


def _calls(value: object) -> list[str]:
    """The tool names of every tools/call request anywhere in a parsed frame (batches and nesting included)."""
    if isinstance(value, list):
        return [name for x in value for name in _calls(x)]
    if not isinstance(value, dict):
        return []
    found = []
    params = value.get("params")
    if value.get("method") == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str):
        found.append(params["name"])
    return found + [name for x in value.values() if isinstance(x, (list, dict)) for name in _calls(x)]


def withheld(frame: bytes, forbidden: set[str]) -> bool:
    """Whether a frame must not be sent: it calls a tool the pass may not call (one the investigation does not)."""
    if not forbidden or (b"tools" not in frame and b"\\" not in frame):
        return False  # "tools/call" cannot be spelt without "tools", or an escape
    try:
        parsed = json.loads(frame.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False  # no JSON parser reads a call out of it
    try:
        return bool(forbidden & set(_calls(parsed)))
    except RecursionError:
        return True  # too deep to look through: not sent, rather than sent unread
