"""The frames a broken or hostile client can put on a stdio server's wire, by kind, as hypothesis strategies, built
from the server's own normal call (its tool and its arguments), so no frame names a tool the server does not have.

For a normal call, `frames_for` gives each kind (KINDS) as one strategy of single-line frames (the runner adds the
newline), the fixed cases run every time: too big to draw often (a 16 MB line, nesting 100,000 deep) or too
important to leave to chance (an id of every wrong type), and the partial frames a client can leave behind when it
goes (`eof`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypedDict, cast

from hypothesis import strategies as st

from wismo.mcp.client.raw import initialize

PROBE = "frames-probe-"  # the runner's normal calls' ids: generated string ids never start with it
MISSING = object()  # a field left out of a message


def dumps(value: object) -> bytes:
    """Compact JSON bytes; NaN and Infinity allowed, hostile too (the server's parser reads them)."""
    return json.dumps(value, separators=(",", ":")).encode()


SMALL_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
HUGE_TEXT = st.builds(
    lambda c, n: c * n, st.sampled_from(["x", "9", "é", "\u202e", "\x00", "\\"]), st.integers(1000, 200_000)
)
HOSTILE = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20) | HUGE_TEXT
HOSTILE |= st.lists(SMALL_JSON, max_size=4) | st.dictionaries(st.text(max_size=6), SMALL_JSON) | st.just(MISSING)
IDS = st.integers(-(2**63), 2**63) | st.text(max_size=30).filter(lambda s: not s.startswith(PROBE))
METHODS = ("tools/call", "tools/list", "ping", "initialize", "notifications/initialized", "foo/bar")
MESSAGES = st.builds(
    lambda ident, method, params: {"jsonrpc": "2.0", "id": ident, "method": method, "params": params},
    IDS,
    st.sampled_from(METHODS),
    st.dictionaries(st.sampled_from(["name", "arguments", "cursor"]), SMALL_JSON),
) | st.builds(lambda m: {"jsonrpc": "2.0", "method": m}, st.sampled_from(METHODS))
BAD_UTF8 = st.sampled_from(
    [b"\xff", b"\xfe", b"\x80", b"\xc0\x80", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80"]
)


def _with_id(base: dict[str, object], value: object) -> bytes:
    """The normal call with `value` as its id."""
    return dumps({**base, "id": value})


def _one_line(frame: bytes) -> bytes:
    return frame.replace(b"\n", b" ")  # a frame is one line: the newline after it is the runner's


def _put(data: bytes, at: int, insert: bytes) -> bytes:
    at = at % (len(data) + 1)
    return data[:at] + insert + data[at:]


def _set(message: Mapping[str, object], path: tuple[str, ...], value: object) -> dict[str, object]:
    """A deep copy of `message` with the field at `path` given `value` (or left out: MISSING)."""
    out = json.loads(json.dumps(message))
    holder = out
    for key in path[:-1]:
        holder = holder[key]
    if value is MISSING:
        holder.pop(path[-1], None)
    else:
        holder[path[-1]] = value
    return cast("dict[str, object]", out)


FIELDS = (("jsonrpc",), ("id",), ("method",), ("params",), ("params", "name"), ("params", "arguments"))


def _wrong_fields(base: dict[str, object], picks: list[tuple[tuple[str, ...], object]]) -> bytes:
    message = base
    for path, value in picks:
        if path[0] != "params" or isinstance(message.get("params"), dict):
            message = _set(message, path, value)
    return dumps(message)


DEEP = ("array", "object", "in params", "unclosed")
LONG = ("argument", "id", "spaces first", "numbers", "not utf-8", "garbage")


def _deep(shape: str, n: int) -> bytes:
    if shape == "array":
        return b"[" * n + b"]" * n
    if shape == "object":
        return b'{"a":' * n + b"1" + b"}" * n
    if shape == "in params":
        return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"[" * n + b"]" * n + b"}}"
    return b"[" * n  # never closed


class CallParams(TypedDict):
    """The params of a tools/call request: the tool's name and its arguments."""

    name: str
    arguments: dict[str, object]


class ToolsCall(TypedDict):
    """The normal call as the frames are built from it: a tools/call request (its JSON read back, its id 1)."""

    jsonrpc: str
    id: int
    method: str
    params: CallParams


def _long(base: ToolsCall, shape: str, n: int) -> bytes:
    if shape == "argument":
        name = next(iter(base["params"]["arguments"]), "argument")
        return dumps(_set(base, ("params", "arguments"), {name: "A" * n}))
    if shape == "id":
        return dumps(_set(base, ("id",), "i" * n))
    if shape == "spaces first":
        return b" " * n + dumps(base)
    if shape == "numbers":
        return b"[" + b"1," * (n // 2) + b"1]"
    return b"\xff" * n if shape == "not utf-8" else b"x" * n


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return True
    return False


NOTIFICATIONS = ("initialized", "cancelled", "progress", "roots/list_changed", "whatever")
ODD_METHODS = ("foo/bar", "tools/cal", "", "rpc.discover", "resources/list", "prompts/list", "completion/complete")
REVISIONS = ("2025-11-25", "2025-06-18", "2024-11-05", "1999-01-01", "")
NOT_JSON = (b"", b" ", b"\t", b"\r", b"\x00", b"\xef\xbb\xbf{}", b"{'jsonrpc': '2.0'}", b"undefined", b"{", b"]")
NOT_RPC: tuple[dict[str, object], ...] = (
    {},
    {"jsonrpc": "2.0"},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "params": {}},
)
DICTS = st.dictionaries(st.text(max_size=6), SMALL_JSON, max_size=3)
KINDS = (
    "not utf-8",
    "not json",
    "json not json-rpc",
    "wrong field types",
    "batch",
    "long line",
    "deep nesting",
    "valid but odd",
)


def _odd(base: dict[str, object]) -> st.SearchStrategy[dict[str, object]]:
    """Valid messages a server does not expect: notifications, answers to nothing asked, odd methods, a second
    initialize, the normal call with unknown members besides."""
    return st.one_of(
        st.builds(
            lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p},
            st.sampled_from([f"notifications/{n}" for n in NOTIFICATIONS]) | st.text(max_size=20),
            st.dictionaries(st.sampled_from(["requestId", "progressToken", "reason"]), SMALL_JSON),
        ),
        st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, IDS, DICTS),  # answers to nothing asked
        st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "error": {"code": -1, "message": "x"}}, IDS | st.none()),
        st.builds(
            lambda i, m: {"jsonrpc": "2.0", "id": i, "method": m},
            IDS,
            st.sampled_from(ODD_METHODS) | st.text(max_size=20),
        ),
        st.builds(lambda rev, i: initialize(rev, i), st.sampled_from(REVISIONS), IDS),  # initialize once more
        st.builds(lambda i, extra: {**base, "id": i, **extra}, IDS, DICTS),
    )


@dataclass(frozen=True)
class Frames:
    """Every kind of frame for one server: a strategy per kind (KINDS), the fixed cases per kind, and the partial
    frames a client can leave behind when it goes (`eof`; `eof[1]` is half a tools/call of the normal call's tool)."""

    strategies: dict[str, st.SearchStrategy[bytes]]
    fixed: dict[str, tuple[Callable[[], bytes], ...]]
    eof: tuple[bytes, ...]


def frames_for(call: dict[str, object]) -> Frames:
    """The frames for a server whose normal call is `call` (a tools/call request): each names that call's tool and
    its arguments, where a frame names any."""
    return _frames(json.dumps({**call, "id": 1}, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _frames(base_json: str) -> Frames:
    base = json.loads(base_json)
    strategies: dict[str, st.SearchStrategy[bytes]] = {
        "not utf-8": st.one_of(
            st.builds(_put, st.binary(max_size=200), st.integers(0, 200), BAD_UTF8),
            st.builds(_put, MESSAGES.map(dumps), st.integers(0, 300), BAD_UTF8),
            st.builds(_put, st.just(dumps(base)), st.integers(0, 100), BAD_UTF8),
        ),
        "not json": st.one_of(
            st.text(max_size=100).filter(_not_json).map(str.encode),
            st.builds(lambda m, k: dumps(m)[: k % len(dumps(m))], MESSAGES, st.integers(0, 300)),  # cut short
            st.builds(lambda m, junk: dumps(m) + junk, MESSAGES, st.sampled_from([b"x", b"}", b",", b"{}", b"]"])),
            st.sampled_from(NOT_JSON),
        ),
        "json not json-rpc": st.one_of(
            SMALL_JSON.filter(lambda v: not isinstance(v, dict)).map(dumps),
            st.dictionaries(
                st.text(max_size=8).filter(lambda k: k not in ("method", "result", "error")), SMALL_JSON
            ).map(dumps),
            st.sampled_from(NOT_RPC).map(dumps),
        ),
        "wrong field types": st.lists(st.tuples(st.sampled_from(FIELDS), HOSTILE), min_size=1, max_size=3).map(
            functools.partial(_wrong_fields, base)
        ),
        "batch": st.one_of(
            st.just(b"[]"),
            st.lists(MESSAGES, min_size=1, max_size=5).map(dumps),
            st.lists(MESSAGES | HOSTILE.filter(lambda v: v is not MISSING), max_size=5).map(dumps),
            st.recursive(MESSAGES, lambda inner: st.lists(inner, min_size=1, max_size=3), max_leaves=6)
            .filter(lambda v: isinstance(v, list))
            .map(dumps),
        ),
        "long line": st.builds(functools.partial(_long, base), st.sampled_from(LONG), st.integers(100_000, 4_000_000)),
        "deep nesting": st.builds(_deep, st.sampled_from(DEEP), st.integers(1, 100_000)),
        "valid but odd": _odd(base).map(dumps),
    }
    fixed: dict[str, tuple[Callable[[], bytes], ...]] = {  # run every time, whatever hypothesis draws
        "wrong field types": tuple(functools.partial(_with_id, base, v) for v in (True, 1.5, None, [1], {"a": 1})),
        "long line": (  # 40 MB: over the cap
            functools.partial(_long, base, "argument", 16 * 2**20),
            functools.partial(_long, base, "argument", 40 * 2**20),
        ),
        "deep nesting": (lambda: _deep("array", 100_000), lambda: _deep("in params", 100_000)),
    }
    tool = json.dumps(base["params"]["name"]).encode()
    eof = (
        b'{"jsonrpc":"2.0","id":"eof","method":"ping"}',  # no newline: answered or not, then a clean exit
        b'{"jsonrpc":"2.0","id":"eof","method":"tools/call","params":{"name":' + tool + b',"argu',
        b'{"jsonrpc":"2.0","id":"eof","method":"ping","params":{"x":"\xe2\x82',  # half a UTF-8 sequence
        b"",  # nothing at all after the handshake
        dumps(base) + b'\n{"jsonrpc":"2.0","id":2,',  # a call, then the client goes mid-line
        b"[" * 100_000,
        b"x" * 4_000_000,
    )
    return Frames({kind: strategy.map(_one_line) for kind, strategy in strategies.items()}, fixed, eof)
