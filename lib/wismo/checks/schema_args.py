"""Hostile arguments for any tool, built from its input schema (hypothesis): for each declared argument, values of
its own type gone wrong (strings one character off the real one, very long, control characters, path-like; numbers
huge, negative, fractional; lists empty or of hostile strings; values outside an enum) and values of every other
type; some arguments left out, unknown ones added. FIXED_PER_ARGUMENT cases per argument, and two per tool, are sent
every time besides the generated ones."""

from __future__ import annotations

import json
import string

from hypothesis import strategies as st

from wismo.checks.framegen import SMALL_JSON
from wismo.checks.records import ListedTool

LONG = "9" * 5000  # as long as the article's "very long" unfriendly input
ODD_NUMBERS = (0, -1, 2**31, 2**53 + 1, 2**64, -(2**63) - 1, 0.5, 1e308, -0.0)
UNKNOWN = "unexpectedArgument"  # an argument no schema here declares
FIXED_PER_ARGUMENT = 4  # empty (or zero), 5,000 characters, null, the wrong type
FIXED_PER_TOOL = 2  # every argument left out; the real ones with an unknown one besides


def _types(schema: object) -> list[str]:
    """The JSON types a property schema declares (its `type`, a list of them, or its anyOf/oneOf branches')."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    return [t for b in branches for t in _types(b)]


def one_off(ident: str) -> st.SearchStrategy[str]:
    """Identifiers one character away from a real one: replaced, inserted or deleted."""
    positions = st.integers(0, len(ident) - 1)
    chars = st.characters(min_codepoint=32, max_codepoint=0x2FF)
    return st.one_of(
        st.builds(lambda i, c: ident[:i] + c + ident[i + 1 :], positions, chars),
        st.builds(lambda i, c: ident[:i] + c + ident[i:], positions, chars),
        st.builds(lambda i: ident[:i] + ident[i + 1 :], positions),
    )


def hostile_text(real: str) -> st.SearchStrategy[str]:
    """Hostile strings for an argument whose real value is `real`: one character off it, unicode and control
    characters, very long, path-like and JSON-like text."""
    json_like = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    ).map(json.dumps)
    return st.one_of(
        one_off(real) if real else st.just(real),
        st.text(max_size=40),  # unicode, controls, surrogates excluded by JSON
        st.text(alphabet=st.characters(max_codepoint=0x1F), max_size=20),  # control characters only
        st.builds(
            lambda c, n: c * n, st.sampled_from(["9", "é", "\u202e", "A"]), st.integers(65, 1_000_000)
        ),  # very long
        st.sampled_from(
            ["", " ", "../../etc/passwd", "/dev/zero", "C:\\Windows\\system32", "~/.ssh/id_rsa", "%00", real + "\n"]
        ),
        json_like,
    )


def _text(real: object) -> st.SearchStrategy[str]:
    return hostile_text(real if isinstance(real, str) else "x")


def typed(schema: object, real: object) -> st.SearchStrategy[object]:
    """Hostile values of the type a property declares, the real value among them."""
    kinds: list[st.SearchStrategy[object]] = []
    for t in _types(schema) or ["string"]:
        if t == "string":
            kinds.append(_text(real))
        elif t in ("integer", "number"):
            kinds.append(st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.sampled_from(ODD_NUMBERS))
        elif t == "boolean":
            kinds.append(st.booleans())
        elif t == "array":
            items = schema.get("items") if isinstance(schema, dict) else None
            first = real[0] if isinstance(real, list) and real else None
            inner = typed(items, first) if isinstance(items, dict) else SMALL_JSON
            kinds.append(st.lists(inner, max_size=4) | st.lists(inner, min_size=50, max_size=300))
        elif t == "object":
            kinds.append(st.dictionaries(st.text(max_size=8), SMALL_JSON, max_size=4))
        elif t == "null":
            kinds.append(st.none())
    enum = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(enum, list) and enum:
        kinds.append(st.sampled_from(enum) | _text(str(enum[0])))
    return st.one_of(st.just(real), *kinds) if real is not None else st.one_of(*kinds)


def values(schema: object, real: object) -> st.SearchStrategy[object]:
    """Hostile values for one argument: mostly of its own type, also of any other."""
    wrong = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text(real) | SMALL_JSON
    return st.one_of(typed(schema, real), typed(schema, real), wrong)


def properties(tool: ListedTool) -> dict[str, object]:
    """A tool's declared arguments (none when its input schema declares no properties)."""
    props = (tool.get("inputSchema") or {}).get("properties")
    return props if isinstance(props, dict) else {}


def arguments(tool: ListedTool, base: dict[str, object]) -> st.SearchStrategy[dict[str, object]]:
    """Hostile argument objects for a tool, starting from real arguments `base` (the normal call's, or the first
    linked call's) where there are any."""
    props = properties(tool)
    required = (tool.get("inputSchema") or {}).get("required") or []
    own = st.fixed_dictionaries(
        {k: values(props.get(k), base.get(k)) for k in required if k in props},
        optional={k: values(props.get(k), base.get(k)) for k in props if k not in required},
    )
    extra = st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=10), st.text(max_size=10), max_size=3)
    return st.one_of(own, st.builds(lambda a, b: {**b, **a}, own, extra), st.just({}), extra)


def _wrong(schema: object) -> object:
    """A value of a type the property does not declare."""
    return 12345678901234567890 if "string" in (_types(schema) or ["string"]) else "not a number, nor a list"


def fixed(tool: ListedTool, base: dict[str, object]) -> list[dict[str, object]]:
    """The cases sent every time, whatever hypothesis draws: every argument left out, an unknown one besides the
    real ones, and for each argument (in name order) empty, 5,000 characters long, null and of the wrong type."""
    cases: list[dict[str, object]] = [{}, {**base, UNKNOWN: "x"}]
    for name, schema in sorted(properties(tool).items()):
        empty: object = [] if "array" in _types(schema) else 0 if {"integer", "number"} & set(_types(schema)) else ""
        long: object = [LONG] if "array" in _types(schema) else LONG
        cases += [{**base, name: value} for value in (empty, long, None, _wrong(schema))]
    return cases
