"""A study's [published] block: provider-reported usage of real conversations with its designs (what a team has in
its provider's logs, or what an article printed), each figure as declared or taken from a reference file, and what
follows from them by arithmetic alone said as derived.

    [published]
    source = "Staging run of 2026-11-20, provider usage log"   # cited wherever its figures stand
    model = "gpt-4.1-mini"
    [[published.conversations]]
    design = "granular"
    case = "BK-1"                  # the case's key value
    requests = [612, 901, 1388]    # input tokens of the model requests, in order: all, or the first ones
    calls = 3                      # how many model requests the conversation made
    input = 2901                   # total input tokens
    output = 240                   # total output tokens
    total = 3141                   # input + output, where only that was published
    tool_calls = 4                 # how many tool calls it made (measured by whoever ran it)
    elapsed_s = 4.2                # its elapsed time in seconds (measured)
    call_id = "call_Xo3..."        # one of the model's call ids as the provider returned it

Every figure may instead be `{ ref = "a.b.c" }`, a path into the JSON file that `reference` names (relative to the
study file; it must carry a `source` block, as data/reference's files do), so a figure is typed once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wismo.core.kinds import DERIVED, PROVIDER, PUBLISHED
from wismo.studies import schema
from wismo.studies.problems import Problems

REPORTED = f"{PROVIDER} ({PUBLISHED})"  # a figure as the provider reported it and the source printed it
# Both median savings set the conversations' second design against their first: they need exactly two designs.
MEDIANS = ("median_saving_percent", "median_elapsed_saving_percent")


@dataclass(frozen=True)
class Conversation:
    """One published conversation: the design and case it ran on, and each published figure (None where absent)."""

    design: str
    case: str
    requests: tuple[int, ...] = ()
    calls: int | None = None
    input: int | None = None
    output: int | None = None
    total: int | None = None
    first_smaller_by: int | None = None
    answer: str | None = None
    cached_input: int | None = None
    tool_calls: int | None = None
    elapsed_s: float | None = None
    call_id: str | None = None
    refs: tuple[tuple[str, str], ...] = ()  # (figure, path) for each figure taken from the reference file

    @property
    def output_known(self) -> bool:
        """Whether its output follows from its figures: every request's input and the total are published."""
        return len(self.requests) >= 1 and self.total is not None and self.calls in (None, len(self.requests))

    def ref(self, figure: str) -> str | None:
        """The path into the reference file a figure was taken from (its key as declared), if it was."""
        return dict(self.refs).get(figure)

    def figures(self) -> dict[str, Any]:
        """The figures as declared: name to value, the absent ones left out."""
        named = {
            "requests": list(self.requests) or None,
            "calls": self.calls,
            "input": self.input,
            "output": self.output,
            "total": self.total,
            "firstSmallerBy": self.first_smaller_by,
            "cachedInput": self.cached_input,
        }
        return {k: v for k, v in named.items() if v is not None}


@dataclass(frozen=True)
class Published:
    """What a study declares of real conversations with its designs, and where the figures come from."""

    source: str
    model: str
    conversations: tuple[Conversation, ...]
    reference: dict[str, Any] = field(
        default_factory=dict
    )  # the reference file's source block, if figures came from one
    median_saving_percent: float | None = None
    median_elapsed_saving_percent: float | None = None
    refs: tuple[tuple[str, str], ...] = ()  # (key, path) for each top-level figure taken from the reference file

    def of(self, design: str, case: str) -> Conversation | None:
        """The published conversation of one design and case, if there is one."""
        return next((c for c in self.conversations if c.design == design and c.case == case), None)

    def compared(self) -> tuple[str, str] | None:
        """The designs the median savings set against each other, the first conversation's first: None unless the
        conversations name exactly two designs."""
        named = list(dict.fromkeys(c.design for c in self.conversations))
        return (named[0], named[1]) if len(named) == 2 else None

    def cited(self, path: str | None) -> str:
        """Where one figure was published: the reference file's section for its path where the file names one
        (figureSections), else the block's source."""
        return self.reference.get("figureSections", {}).get(path or "", "") or self.source

    def derived(self, conversation: Conversation) -> dict[str, dict[str, Any]]:
        """Each figure of one conversation with its kind: published as declared, and what arithmetic alone gives
        (the turns' additions, the input as the sum of every request, the output as total minus input, the first
        request as the case's first conversation's minus `first_smaller_by`)."""
        out = {k: {"value": v, "kind": REPORTED} for k, v in conversation.figures().items()}
        requests = list(conversation.requests)
        if len(requests) > 1:
            out["additions"] = {"value": [b - a for a, b in zip(requests, requests[1:])], "kind": DERIVED}
        if conversation.input is None and requests and conversation.calls == len(requests):
            out["input"] = {"value": sum(requests), "kind": DERIVED}
        first = next(c for c in self.conversations if c.case == conversation.case)
        if not requests and conversation.first_smaller_by is not None and first.requests:
            out["requests"] = {"value": [first.requests[0] - conversation.first_smaller_by], "kind": DERIVED}
        given_input = out.get("input", {}).get("value")
        if conversation.output is None and conversation.total is not None and given_input is not None:
            out["output"] = {"value": conversation.total - given_input, "kind": DERIVED}
        return out


def read_published(r: Problems, raw: object, folder: Path, designs: list[str], keys: list[str]) -> Published | None:
    """The [published] table, or None when there is none (problems said, one sentence each)."""
    if raw is None:
        return None
    where = "published"
    if not isinstance(raw, dict):
        return None  # the schema said
    reference: dict[str, object] = {}
    source_block: dict[str, object] = {}
    if "reference" in raw:
        reference, source_block = _reference(r, folder, raw["reference"])
    source = _text(r, where, raw.get("source")) or _cited(source_block)
    if not source:
        r.say(where, "source is missing: say which run the figures come from (it is cited wherever they stand)")
    model = _text(r, where, raw.get("model"))
    if not model:
        r.say(where, "model is missing: the model the conversations ran on")
    rows = raw.get("conversations")
    if rows is None:
        r.say(where, "conversations is missing: give them as [[published.conversations]] tables")
    if not isinstance(rows, list) or not all(isinstance(x, dict) for x in rows):
        rows = []
    conversations = []
    for i, row in enumerate(rows, start=1):
        found = _conversation(r, f"published.conversations[{i}]", row, reference, designs, keys)
        if found is not None:
            conversations.append(found)
    medians = {k: _value(r, where, k, raw.get(k), reference, number=True, unit=PERCENT) for k in MEDIANS}
    designs_named = list(dict.fromkeys(c.design for c in conversations))
    for k in MEDIANS:
        if medians[k] is not None and conversations and len(designs_named) != 2:
            r.say(
                where,
                f"{k} sets one design against another, but the conversations name {len(designs_named)} design"
                f"{'s' if len(designs_named) != 1 else ''} ({', '.join(designs_named)}); it needs exactly two",
            )
    return Published(
        source or "",
        model or "",
        tuple(conversations),
        source_block,
        medians["median_saving_percent"],
        medians["median_elapsed_saving_percent"],
        _refs(raw, MEDIANS),
    )


def _refs(raw: dict[str, Any], keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each of `keys` declared as { ref = ... }, with its path (to cite the reference file's section for it)."""
    return tuple(
        (k, raw[k]["ref"]) for k in keys if isinstance(raw.get(k), dict) and isinstance(raw[k].get("ref"), str)
    )


def _conversation(
    r: Problems, where: str, row: dict[str, object], reference: dict[str, object], designs: list[str], keys: list[str]
) -> Conversation | None:
    """One [[published.conversations]] table."""
    before = len(r.problems)
    design: Any = row.get("design")  # as the TOML has it: checked below, a problem said unless a design's name
    case = _value(r, where, "case", row.get("case"), reference)
    if design not in designs:
        r.say(
            where, f"design names {design!r}, which is not a design of the study; the designs are {', '.join(designs)}"
        )
    if case not in keys:
        r.say(where, f"case names {case!r}, which is no case's key; the keys are {', '.join(map(str, keys))}")
    figures = {
        k: _value(r, where, k, row.get(k), reference, number=True) for k in ("calls", "input", "output", "total")
    }
    requests = _value(r, where, "requests", row.get("requests"), reference)
    if requests is not None and not (isinstance(requests, list) and all(_count(x) for x in requests)):
        r.say(where, f"requests must be a list of token counts, not {requests!r}")
        requests = None
    smaller = _value(r, where, "first_smaller_by", row.get("first_smaller_by"), reference, number=True)
    answer = _value(r, where, "answer", row.get("answer"), reference)
    cached = _value(r, where, "cached_input", row.get("cached_input"), reference, number=True)
    tool_calls = _value(r, where, "tool_calls", row.get("tool_calls"), reference, number=True, unit=COUNT)
    elapsed = _value(r, where, "elapsed_s", row.get("elapsed_s"), reference, number=True, unit=SECONDS)
    if isinstance(tool_calls, float):
        r.say(where, f"tool_calls must be {COUNT}, not {tool_calls!r}")
    if answer is not None and not isinstance(answer, str):
        r.say(where, "answer must be text, the model's answer as published")
        answer = None
    call_id = _value(r, where, "call_id", row.get("call_id"), reference)
    if call_id is not None and not (isinstance(call_id, str) and call_id and not any(c.isspace() for c in call_id)):
        r.say(where, f"call_id must be one call id as the provider returned it (text without spaces), not {call_id!r}")
        call_id = None
    if len(r.problems) > before:
        return None
    return Conversation(
        design,
        case,
        tuple(requests or ()),
        figures["calls"],
        figures["input"],
        figures["output"],
        figures["total"],
        smaller,
        answer,
        cached,
        tool_calls,
        elapsed,
        call_id,
        _refs(row, schema.keys(schema.CONVERSATION)),
    )


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


TOKENS = "a count of tokens (a whole number)"
COUNT = "a count (a whole number)"
SECONDS = "a number of seconds"
PERCENT = "a percentage (a number)"


def _value(
    r: Problems,
    where: str,
    key: str,
    given: Any,
    reference: dict[str, object],
    number: bool = False,
    unit: str = TOKENS,
) -> Any:
    """A figure as declared, or the one a { ref = "a.b" } names in the reference file; checked to be a number of
    at least 0 where `number` (`unit` says which, in the problem)."""
    if isinstance(given, dict):
        path = given.get("ref")
        if set(given) != {"ref"} or not isinstance(path, str):
            r.say(where, f'{key} must be a value or {{ ref = "a.b.c" }}, a path into the reference file')
            return None
        if not reference:
            r.say(where, f"{key} refers to {path!r}, but [published] names no reference file")
            return None
        value: object = reference
        for step in path.split("."):
            if not isinstance(value, dict) or step not in value:
                r.say(where, f"{key} refers to {path!r}, which the reference file does not hold")
                return None
            value = value[step]
        given = value
    if number and given is not None and not (_count(given) or (isinstance(given, float) and given >= 0)):
        r.say(where, f"{key} must be {unit}, not {given!r}")
        return None
    return given


def _reference(r: Problems, folder: Path, name: object) -> tuple[dict[str, object], dict[str, object]]:
    """The reference file's figures and its source block."""
    if not isinstance(name, str) or not name:
        r.say("published", "reference must be a JSON file's path relative to the study file")
        return {}, {}
    path = (folder / name).resolve()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        r.say("published", f"reference {name} cannot be read as JSON ({type(exc).__name__})")
        return {}, {}
    if not isinstance(data, dict) or not isinstance(data.get("source"), dict):
        r.say("published", f"reference {name} has no source block; every reference figure must say where it comes from")
        return {}, {}
    return data, data["source"]


def _cited(source: dict[str, object]) -> str:
    """A reference file's source as one citation."""
    parts = [source.get("document"), source.get("run")]
    return ", ".join(str(p) for p in parts if p)


def _text(r: Problems, where: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        r.say(where, f"must give text, not {value!r}")
        return None
    return value
