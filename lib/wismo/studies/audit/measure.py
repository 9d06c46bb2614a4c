"""`wismo tokens`: what any MCP server puts in a model's context, counted completely and part by part.

Its tool definitions (openai-harmony's rendering per tool and per part, the cookbook's count beside it, and the
compact JSON a client sends), its instructions, the prompts and resources it lists, and sampled tool results,
bare and under every client profile. Every figure carries its method and encoding; timings stay in "timings".
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeVar, final

from wismo.accounting import tokens
from wismo.accounting.tokens import definitions, framing
from wismo.accounting.tokens.definitions import ToolCountRecord, WholeRecord
from wismo.core.errors import described
from wismo.core.jsonfmt import compact, utf8_len
from wismo.mcp.client.address import Address, Target
from wismo.mcp.client.failures import HarnessError
from wismo.studies.audit.target import Call, TargetError

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp_types import InitializeResult

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 20.0
MAX_PAGES = 1000  # a server whose cursor never ends must not keep us listing
JSON_METHOD = (
    "the function definition as a client sends it (type, name, description, parameters, strict) as "
    "compact JSON, counted as text: every schema keyword included"
)
TEXT_METHOD = "the text as the server sends it, counted as text"
ENTRY_METHOD = (
    "each entry of the list as compact JSON in its wire form (name, description and the rest), counted as text"
)
BARE_METHOD = "the result's text blocks joined by newlines, counted as text"
FRAMED_METHOD = "the function output text each client profile makes of the whole CallToolResult, counted as text"
# Schema keywords openai-harmony 0.0.8 renders; anything else in a schema reaches its rendering as 'any' or not at
# all (checked against the package: anyOf, allOf, $ref, const, not, format and the like are dropped).
HARMONY_RENDERS = frozenset(
    {"type", "properties", "items", "required", "description", "enum", "oneOf", "default", "title", "examples"}
)


class Labels(TypedDict):
    """What labels a figure: its method, its encoding and its kind."""

    method: str
    encoding: str
    label: str


@final
class Figures(TypedDict):
    """Tokens and UTF-8 bytes of one text."""

    tokens: int
    bytes: int


@final
class Unframed(TypedDict):
    """A sampled result a client profile cannot frame: why, in one sentence."""

    error: str


class ResultCount(TypedDict):
    """One sampled CallToolResult counted bare and under every client profile (count_result)."""

    tool: str
    arguments: dict[str, object]
    isError: bool
    wireBytes: int
    bare: Figures
    profiles: dict[str, Figures | Unframed]


class JsonCount(Labels):
    """Definitions as the compact JSON a client sends, counted as text."""

    total: int


class ToolFigures(ToolCountRecord):
    """One tool's definition counted: harmony and cookbook by part, compact JSON, its share of the whole, and the
    schema keywords harmony leaves out."""

    json: JsonCount
    sharePercent: float
    harmonyLeavesOut: list[str]


class DefinitionsFigures(TypedDict):
    """Every tool definition counted whole: harmony and cookbook (with their frames), compact JSON."""

    harmony: WholeRecord
    cookbook: WholeRecord
    json: JsonCount
    harmonyFrameSharePercent: float


class Entry(TypedDict):
    """One prompts/list or resources/list entry counted (its name and URI as the server lists them)."""

    name: object
    uri: NotRequired[object]
    tokens: int
    bytes: int


class Entries(TypedDict):
    """A prompts/list or resources/list counted entry by entry; only `declared` (false) when the server does not
    declare the capability."""

    method: NotRequired[str]
    encoding: NotRequired[str]
    label: NotRequired[str]
    declared: bool
    entries: NotRequired[list[Entry]]
    total: NotRequired[int]


class Instructions(Labels):
    """The server's instructions counted ("present" false, and zero tokens, when it sends none)."""

    present: bool
    tokens: int
    bytes: int


class Server(TypedDict):
    """The server as its initialize answer names it, and the capabilities it declares."""

    name: str
    version: str
    protocolVersion: str
    capabilities: list[str]


class Calls(TypedDict):
    """The sampled tool results counted, with the methods."""

    bareMethod: str
    framedMethod: str
    encoding: str
    label: str
    results: list[ResultCount]


class ConnectTimings(TypedDict):
    """Wall times of reaching the server and listing what it declares, in ms."""

    connectMs: float
    listMs: float


class Timings(ConnectTimings):
    """Wall times of every step of a measurement, in ms."""

    importMs: float
    gatherMs: float
    waitMs: float
    countMs: float
    callsMs: list[float]
    resultsMs: float
    totalMs: float


class Measurement(TypedDict):
    """What `wismo tokens` measured of one server (its --json output)."""

    target: Target
    server: Server
    tools: list[ToolFigures]
    definitions: DefinitionsFigures
    instructions: Instructions
    prompts: Entries
    resources: Entries
    calls: Calls
    timings: Timings


Counted = tuple[tuple[list[ToolFigures], DefinitionsFigures], float]


class _Gathered(TypedDict):
    """What came back from the server, in wire form, and the definitions' count under way."""

    init: InitializeResult
    capabilities: list[str]
    counting: Future[Counted]
    prompts: list[dict[str, object]] | None
    resources: list[dict[str, object]] | None
    samples: list[tuple[dict[str, object], float]]
    timings: ConnectTimings


def _preload(encoding_name: str) -> None:
    """Load the encodings while the handshake and the listing run, when this process would mostly wait (about 1 s)."""
    tokens.encoding(encoding_name)
    tokens.encoding(definitions.HARMONY_ENCODING)
    definitions.harmony_encoding()


class _UnreadableLines(logging.Handler):
    """Counts the lines a stdio server wrote that the SDK could not read as JSON-RPC (it logs each one)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("Failed to parse JSONRPC"):
            self.count += 1


def named(where: Address) -> str:
    """The server as `wismo tokens` names it in a sentence: its URL, or its command in backquotes."""
    return where.url or f"`{where.describe()}`"


def _problem(failure: HarnessError, where: Address, timeout_s: float, unreadable: int) -> str:
    """One sentence for a harness failure to reach `where`, from the failure's cause, error and stderr."""
    stderr = " ".join(failure.stderr.split())[-200:]
    said = f" (its stderr ends with: {stderr})" if stderr else ""
    name = named(where)
    error = described(failure.error) if failure.error is not None else str(failure)
    if failure.cause == "timeout":
        return f"{name} did not answer the MCP handshake within {timeout_s:g} s{said}"
    if failure.cause == "not-listening":
        return f"nothing answers at {where.url} ({failure.error})"
    if failure.cause == "missing-command":
        return f"cannot start {name}: {error}"
    if failure.cause == "exited-at-start" and where.transport == "stdio":
        lines = "1 line that is" if unreadable == 1 else f"{unreadable} lines that are"
        wrote = f" after writing {lines} not JSON-RPC" if unreadable else ""
        return f"{name} is not an MCP server: it closed the connection without answering initialize{wrote}{said}"
    if failure.cause == "not-mcp":
        return f"{name} is not an MCP server: it answered initialize with the error {str(failure.error)!r}{said}"
    if failure.cause == "died-mid-session":
        return f"{name} could not be measured: the connection failed mid-session: {error}{said}"
    return f"{name} could not be measured: {error}{said}"


async def _bounded(what: str, where: Address, timeout_s: float, request: Callable[[], Awaitable[T]]) -> T:
    """One request with a deadline; a failure becomes a TargetError naming the request."""
    import anyio

    try:
        with anyio.fail_after(timeout_s):
            return await request()
    except TimeoutError:
        raise TargetError(f"{named(where)} did not answer {what} within {timeout_s:g} s") from None
    except Exception as exc:
        raise TargetError(f"{named(where)} failed {what}: {type(exc).__name__}: {exc}") from None


async def _listing(
    session: object, method: str, field: str, where: Address, timeout_s: float
) -> list[dict[str, object]]:
    """Every entry of a paginated list request (tools/list, prompts/list, resources/list), in wire form."""
    import mcp_types

    request = getattr(session, f"list_{field}")
    entries: list[dict[str, object]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await _bounded(method, where, timeout_s, functools.partial(request, params=params))
        entries += [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in getattr(page, field)]
        cursor = page.next_cursor
        if not cursor:
            return entries
    raise TargetError(f"{named(where)} kept answering {method} with another page after {MAX_PAGES} pages")


async def _sample(
    session: ClientSession, call: Call, where: Address, timeout_s: float
) -> tuple[dict[str, object], float]:
    """One tools/call: the CallToolResult as the server sent it (unset fields left out), and its wall time."""
    started = time.perf_counter()
    result = await _bounded(
        f"tools/call {call.tool}",
        where,
        timeout_s + 1,
        lambda: session.call_tool(call.tool, call.arguments, read_timeout_seconds=timeout_s),
    )
    elapsed = (time.perf_counter() - started) * 1000
    return result.model_dump(mode="json", by_alias=True, exclude_unset=True), elapsed


async def _gather(
    where: Address,
    calls: Sequence[Call],
    timeout_s: float,
    on_tools: Callable[[list[dict[str, object]]], Future[Counted]],
) -> _Gathered:
    """Handshake, list everything the server declares, sample the calls; what came back, in wire form, and what
    `on_tools` returned for the tools (called as soon as they are listed)."""
    unreadable = _UnreadableLines()
    sdk_log = logging.getLogger("mcp.client.stdio")
    sdk_log.addHandler(unreadable)
    try:
        async with where.connect("MCP", timeout_s=timeout_s) as conn:
            session = conn.session
            if (init := session.initialize_result) is None:  # connect() has completed the handshake
                raise TargetError(f"{named(where)} completed no handshake")
            listed = time.perf_counter()
            capabilities = init.capabilities
            # Each list only when the server declares it; a server without tools has no definitions to count.
            tools = await _listing(session, "tools/list", "tools", where, timeout_s) if capabilities.tools else []
            counting = on_tools(tools)
            prompts = (
                await _listing(session, "prompts/list", "prompts", where, timeout_s) if capabilities.prompts else None
            )
            resources = (
                await _listing(session, "resources/list", "resources", where, timeout_s)
                if capabilities.resources
                else None
            )
            list_ms = (time.perf_counter() - listed) * 1000
            samples = [await _sample(session, c, where, timeout_s) for c in calls]
    except HarnessError as exc:
        raise TargetError(_problem(exc, where, timeout_s, unreadable.count)) from None
    finally:
        sdk_log.removeHandler(unreadable)
    declared = init.capabilities.model_dump(by_alias=True, exclude_none=True)
    return {
        "init": init,
        "capabilities": sorted(declared),
        "counting": counting,
        "prompts": prompts,
        "resources": resources,
        "samples": samples,
        "timings": {"connectMs": round(conn.start_ms, 1), "listMs": round(list_ms, 1)},
    }


def _keywords(schema: object) -> set[str]:
    """Every JSON Schema keyword used anywhere in `schema` (property names are not keywords)."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    children = list((schema.get("properties") or {}).values()) + list((schema.get("$defs") or {}).values())
    children += list((schema.get("definitions") or {}).values())
    for key in ("items", "additionalProperties", "not", "anyOf", "allOf", "oneOf", "prefixItems"):
        value = schema.get(key)
        children += value if isinstance(value, list) else [value]
    return found.union(*(_keywords(c) for c in children)) if children else found


def _labels(method: str, encoding_name: str) -> Labels:
    """What figures are labelled with: their method, encoding and kind."""
    return {"method": method, "encoding": encoding_name, "label": tokens.LABEL}


def _definitions(tools: list[dict[str, object]], encoding_name: str) -> tuple[list[ToolFigures], DefinitionsFigures]:
    """Per tool and whole: harmony by part, cookbook by part, compact JSON; each tool's share of the whole."""
    functions = [tokens.mcp_tool_to_function(t) for t in tools]
    counted = definitions.count_definitions(functions, encoding_name).as_dict()
    whole = counted["harmony"]["total"]
    json_counts = [tokens.count_text(compact(f), encoding_name) for f in functions]
    rows: list[ToolFigures] = []
    for f, row, json_tokens in zip(functions, counted["tools"], json_counts):
        left_out = sorted(_keywords(f.get("parameters")) - HARMONY_RENDERS)
        rows.append(
            {
                **row,
                "json": {**_labels(JSON_METHOD, encoding_name), "total": json_tokens},
                "sharePercent": round(100 * row["harmony"]["total"] / whole, 1) if whole else 0.0,
                "harmonyLeavesOut": left_out,
            }
        )
    totals: DefinitionsFigures = {
        "harmony": counted["harmony"],
        "cookbook": counted["cookbook"],
        "json": {**_labels(JSON_METHOD, encoding_name), "total": sum(json_counts)},
        "harmonyFrameSharePercent": round(100 * counted["harmony"]["frame"] / whole, 1) if whole else 0.0,
    }
    return rows, totals


def _counted(tools: list[dict[str, object]], encoding_name: str) -> Counted:
    """The definitions counted (see _definitions), and the ms it took."""
    started = time.perf_counter()
    counted = _definitions(tools, encoding_name)
    return counted, round((time.perf_counter() - started) * 1000, 1)


def _entry(e: dict[str, object], encoding_name: str) -> Entry:
    """One listed entry counted: its name (and URI), then its tokens and bytes."""
    name, figures = e.get("name", ""), _text(compact(e), encoding_name)
    if "uri" in e:
        return {"name": name, "uri": e["uri"], "tokens": figures["tokens"], "bytes": figures["bytes"]}
    return {"name": name, "tokens": figures["tokens"], "bytes": figures["bytes"]}


def _entries(listed: list[dict[str, object]] | None, encoding_name: str) -> Entries:
    """A prompts/list or resources/list counted entry by entry; only when the server declares the capability."""
    if listed is None:
        return {"declared": False}
    rows = [_entry(e, encoding_name) for e in listed]
    return {
        **_labels(ENTRY_METHOD, encoding_name),
        "declared": True,
        "entries": rows,
        "total": sum(r["tokens"] for r in rows),
    }


def _text(text: str, encoding_name: str) -> Figures:
    """Tokens and UTF-8 bytes of one text."""
    return {"tokens": tokens.count_text(text, encoding_name), "bytes": utf8_len(text)}


def count_result(call: Call, result: dict[str, Any], encoding_name: str) -> ResultCount:
    """One sampled CallToolResult counted bare and under every client profile, with bytes."""
    bare = "\n".join(b.get("text", "") for b in result.get("content") or [] if b.get("type") == "text")
    profiles: dict[str, Figures | Unframed] = {}
    for name, client in framing.PROFILES.items():
        try:
            profiles[name] = _text(client.output(result), encoding_name)
        except framing.FramingError as exc:
            profiles[name] = {"error": str(exc)}
    return {
        "tool": call.tool,
        "arguments": call.arguments,
        "isError": bool(result.get("isError")),
        "wireBytes": utf8_len(compact(result)),
        "bare": _text(bare, encoding_name),
        "profiles": profiles,
    }


async def measure(
    where: Address,
    calls: Sequence[Call] = (),
    encoding_name: str = tokens.DEFAULT_ENCODING,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Measurement:
    """Everything `where` puts in a model's context, counted; a TargetError (one sentence) when it cannot be."""
    clock = [time.perf_counter()]

    def lap() -> float:
        clock.append(time.perf_counter())
        return round((clock[-1] - clock[-2]) * 1000, 1)

    async with AsyncExitStack() as stack:
        # A worker loads the encodings while the handshake and the listing run, and counts the definitions while the
        # connection closes (the server's own exit): the two overlap what waits on the server.
        from wismo.mcp.client import connection as harness  # noqa: F401

        imported = lap()
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=1))
        loading = pool.submit(_preload, encoding_name)
        got = await _gather(where, calls, timeout_s, lambda listed: pool.submit(_counted, listed, encoding_name))
        gathered = lap()
        loading.result()
        (tools, totals), count_ms = got["counting"].result()
        waited = lap()
    init = got["init"]
    instructions = init.instructions
    results = [count_result(c, r, encoding_name) for c, (r, _) in zip(calls, got["samples"])]
    timings: Timings = {
        **got["timings"],
        "importMs": imported,
        "gatherMs": gathered,
        "waitMs": waited,
        "countMs": count_ms,
        "callsMs": [round(ms, 1) for _, ms in got["samples"]],
        "resultsMs": lap(),
        "totalMs": round((clock[-1] - clock[0]) * 1000, 1),
    }
    return {
        "target": where.as_dict(),
        "server": {
            "name": init.server_info.name,
            "version": init.server_info.version,
            "protocolVersion": init.protocol_version,
            "capabilities": got["capabilities"],
        },
        "tools": tools,
        "definitions": totals,
        "instructions": {
            **_labels(TEXT_METHOD, encoding_name),
            "present": instructions is not None,
            **_text(instructions or "", encoding_name),
        },
        "prompts": _entries(got["prompts"], encoding_name),
        "resources": _entries(got["resources"], encoding_name),
        "calls": {
            "bareMethod": BARE_METHOD,
            "framedMethod": FRAMED_METHOD,
            "encoding": encoding_name,
            "label": tokens.LABEL,
            "results": results,
        },
        "timings": timings,
    }
