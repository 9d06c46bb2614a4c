"""What an investigation established, from its tool turns: each step's result read as the declaration says, the
entry's value and its linked results kept where it says (`into`) or merged into one value, a paged design's pages
merged, a failed linked call kept as an explicit missing record (never dropped)."""

from __future__ import annotations

from typing import Any

from wismo.core.investigation import FollowUp, Investigation
from wismo.core.jsonfmt import canonical
from wismo.core.walk import Call

MISSING = "missing"  # where merged evidence keeps the stand-ins of failed linked calls


def missing(arguments: dict[str, object], message: str) -> dict[str, object]:
    """The explicit stand-in for a linked record that could not be read: the arguments it was asked for with (the
    identifier, for a one-argument link), and the error."""
    return {**arguments, "missing": True, "error": message}


def union(a: object, b: object) -> object:
    """Two results merged: objects key by key, lists concatenated without repeating an element already there, any
    other value the first's (how a design's several results become one evidence value)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for key, value in b.items():
            out[key] = union(a[key], value) if key in a else value
        return out
    if isinstance(a, list) and isinstance(b, list):
        seen = {canonical(x) for x in a}
        out_list = list(a)
        for x in b:
            if canonical(x) not in seen:
                seen.add(canonical(x))
                out_list.append(x)
        return out_list
    return a


def pages_merged(pages: list[object], how: Investigation) -> object:
    """A paged design's pages as one value: its own merge when it declares one, else every list concatenated and
    every other value the first page's, without the part of a page that holds the cursor."""
    if how.merge_pages is not None:
        return how.merge_pages(pages)
    top = how.cursor.next.split(".")[0] if how.cursor else None
    merged: object = None
    for page in pages:
        body = {k: v for k, v in page.items() if k != top} if isinstance(page, dict) else page
        merged = body if merged is None else _concatenated(merged, body)
    return merged


def _concatenated(a: object, b: object) -> object:
    """Pages joined: objects key by key, lists one after the other (pages never repeat an element), else the first."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {**b, **{k: (_concatenated(v, b[k]) if k in b else v) for k, v in a.items()}}
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    return a


def evidence(how: Investigation, tool_turns: list[list[Call]]) -> tuple[object, str | None]:
    """What an investigation established, or (None, the entry call's error text)."""
    entry = tool_turns[0][0]
    if entry["isError"]:
        return None, entry["output"]
    if how.cursor:
        return pages_merged([how.value_of(c) for turn in tool_turns for c in turn], how), None
    record = how.value_of(entry)
    if not how.links:
        return record, None
    context: Any = {how.into: record} if how.into else record
    followed = iter(tool_turns[1] if len(tool_turns) > 1 else [])
    for link in how.links:
        _, many = how.targets(record, link)
        items = how.followed(record, link)
        found = [_linked(how, next(followed, None), link, item) for item in items]
        if link.into:
            if link.batch:  # one call's result, or an empty list when there was nothing to ask for
                context[link.into] = found[0] if found else ([] if many else None)
            else:
                context[link.into] = found if many else (found[0] if found else None)
        else:
            for result in found:
                context = _merged_in(context, result)
    return context, None


def _linked(how: Investigation, call: Call | None, link: FollowUp, item: object) -> object:
    """A linked call's result, read as the link says, or its missing-record stand-in."""
    if call is None:
        return missing(dict.fromkeys(link.item_arguments, item), "no call was made for it")
    if call["isError"]:
        return missing(call["arguments"], call["output"])
    return how.value_of(call, link)


def _merged_in(context: object, result: object) -> object:
    """A linked result merged into the evidence; a missing record goes to the evidence's `missing` list."""
    if isinstance(result, dict) and result.get("missing") is True:
        return union(context, {MISSING: [result]}) if isinstance(context, dict) else context
    return union(context, result)
