"""Links that found nothing to follow: a link whose `from` finds no value in the entry's value of any case is said,
never passed over in silence, with what the entry's value was and how to read it instead."""

from __future__ import annotations

import json

from wismo.core.errors import InputError
from wismo.core.investigation import Investigation
from wismo.core.walk import Call


def fix(value: object) -> str:
    """How to follow something in a value of this shape instead, in a sentence's second half."""
    if isinstance(value, str):
        return (
            "read the entry with a pattern (a regular expression whose matches become a list to follow) or "
            'read = "structured", or give from = "@" to pass the text itself'
        )
    if isinstance(value, list):
        return 'give a from for a list: "@" for each element, "[].name" for each element\'s name, or a filter'
    if isinstance(value, dict):
        return f'give a from naming what it holds, such as "{next(iter(value))}"' if value else "check the server"
    return "check what the server answers for these cases"


def described(value: object) -> str:
    """A value as a sentence names it: text (its length and start), a list (how many of what), an object (its keys).

    >>> described({"files": None, "listing": "[FILE] a.txt"})
    'an object with the keys files, listing'
    >>> described(["a", "b"])
    'a list of 2 strings'
    """
    if isinstance(value, str):
        start = json.dumps(value[:40], ensure_ascii=False) + ("…" if len(value) > 40 else "")
        return f"text of {len(value):,} characters, {start}"
    if isinstance(value, dict):
        keys = list(value)
        shown = ", ".join(keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
        return f"an object with the keys {shown}" if keys else "an empty object"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        kinds = sorted({_kind(x) for x in value})
        return f"a list of {len(value):,} {' and '.join(kinds) if len(kinds) < 3 else 'values'}"
    return "null" if value is None else f"the value {json.dumps(value)}"


def _kind(value: object) -> str:
    """What an element of a list is, in the plural."""
    if isinstance(value, dict):
        return "objects with the keys " + ", ".join(list(value)[:5]) if value else "empty objects"
    return {str: "strings", list: "lists", bool: "booleans"}.get(
        type(value), "numbers" if value is not None else "nulls"
    )


def unfollowed(design: str, how: Investigation, entry_values: list[object]) -> list[dict[str, object]]:
    """Every link of a design that found nothing to follow in any of these entry values (the cases whose entry call
    succeeded), with the first value described and the fix, as one sentence each. Empty when there are no values."""
    if not entry_values:
        return []
    out = []
    for i, link in enumerate(how.links, start=1):
        if any(how.followed(value, link) for value in entry_values):
            continue
        sentence = (
            f'design "{design}": links[{i}] (from = "{link.key}", tool {link.tool}) found nothing to follow in any '
            f"case: the entry's value was {described(entry_values[0])}; {fix(entry_values[0])}."
        )
        out.append({"design": design, "link": i, "from": link.key, "tool": link.tool, "sentence": sentence})
    return out


class PatternReadsNothing(InputError):
    """A step whose pattern read nothing in any case whose result had text: the study would compare empty evidence.
    `sentence` says which design, step and tool, and the start of the text it was given."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


def pattern_reads(how: Investigation, tool_turns: list[list[Call]]) -> list[tuple[str, str, str, bool]]:
    """Each result a step with a pattern read in one case: (step, tool, its text, whether the pattern read anything)."""
    out = []
    entry = tool_turns[0][0] if tool_turns and tool_turns[0] else None
    if entry is not None and how.reading.pattern and not entry["isError"]:
        out.append(("entry", how.entry, entry["output"], bool(how.value_of(entry))))
    for i, link in enumerate(how.links, start=1):
        if not link.reading.pattern:
            continue
        for call in (c for turn in tool_turns[1:] for c in turn if c["name"] == link.tool and not c["isError"]):
            out.append((f"links[{i}]", link.tool, call["output"], bool(how.value_of(call, link))))
    return out


def unread(design: str, reads: list[tuple[str, str, str, bool]]) -> list[dict[str, object]]:
    """Each step whose pattern read nothing from a result that had text, in one sentence naming the design, the step
    and the text's start; PatternReadsNothing where a step read nothing in every case that had text."""
    out = []
    for step, tool in dict.fromkeys((s, t) for s, t, _, _ in reads):
        texts = [(text, read) for s, _, text, read in reads if s == step and text.strip()]
        empty = [text for text, read in texts if not read]
        if not empty:
            continue
        start = json.dumps(empty[0][:80], ensure_ascii=False) + ("…" if len(empty[0]) > 80 else "")
        sentence = (
            f'design "{design}": {step} (tool {tool}) read nothing with its pattern from {len(empty)} of '
            f"{len(texts)} results that had text, the first {start}"
        )
        if len(empty) == len(texts):
            raise PatternReadsNothing(
                sentence + "; a pattern that reads nothing in every case compares empty evidence, so fix the pattern"
            )
        out.append({"design": design, "step": step, "tool": tool, "results": len(empty), "sentence": sentence + "."})
    return out
