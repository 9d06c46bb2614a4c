"""What a span is, by the names the conventions give it: a model call (GenAI inference spans), a tool call (GenAI
`execute_tool`, MCP `tools/call {tool}`, OpenLLMetry's `{tool}.tool`), or neither."""

from __future__ import annotations

import functools
import ipaddress
import json
from typing import Any

import msgspec

from wismo.core.errors import WismoError
from wismo.core.kinds import PROVIDER, SCRIPTED, SERVER, TIKTOKEN
from wismo.runs.traces import otlp
from wismo.runs.traces.otlp import Span

# GenAI semantic conventions: the operations that are a call to a model.
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")  # the second: older and OpenLLMetry
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
CACHED_TOKENS = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens")
MCP_TOOLS_CALL = "tools/call"
CONVERSATION = "gen_ai.conversation.id"  # the attribute that names a span's conversation
# What a model call's usage is, when the agent says (wismo's own loop does: its scripted model's usage is a tiktoken
# estimate); otherwise it is what the provider reported, as the GenAI conventions define gen_ai.usage.*.
USAGE_KIND = "wismo.usage.kind"
USAGE_KINDS = (PROVIDER, TIKTOKEN, SERVER, SCRIPTED)
# Providers that are a stand-in for a model: wismo's scripted loop as its traces name it, an agent framework's
# function and test models (pydantic-ai's FunctionModel and TestModel). Their token counts are their own.
STAND_IN_PROVIDERS = frozenset({"wismo.scripted", "function", "test"})


def usage_kind(attributes: dict[str, object]) -> str:
    """What a model call's token counts are, from what its span says: the agent's own word where it gives one
    (wismo.usage.kind), a stand-in model's own count, a server's at a loopback or private address, else the
    provider's."""
    said = attributes.get(USAGE_KIND)
    if said in USAGE_KINDS:
        return str(said)
    provider = str(_first(attributes, ("gen_ai.provider.name", "gen_ai.system")) or "")
    if provider in STAND_IN_PROVIDERS:
        return SCRIPTED
    if _private(str(attributes.get("server.address") or "")):
        return SERVER
    return PROVIDER


HOST_NAME = 253  # characters: the longest DNS name


def _private(address: str) -> bool:
    """Whether a server address is this machine or a private network's: a local server, not a model provider."""
    # An agent calls few servers, and parsing text that is no IP address raises, dearly (2 us a model call): each
    # address is parsed once, one no longer than a host name can be, so that hostile text cannot fill the cache.
    return _parsed_private(address) if len(address) <= HOST_NAME else _parse_private(address)


def _parse_private(address: str) -> bool:
    if address in ("localhost",) or address.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


_parsed_private = functools.lru_cache(maxsize=1024)(_parse_private)


class SpanIncomplete(WismoError):
    """A model or tool call span lacking an attribute a conversation needs: `missing` names it."""

    def __init__(self, missing: str) -> None:
        super().__init__(missing)
        self.missing = missing


class ModelCall(msgspec.Struct, gc=False):  # untracked by the cycle collector, as its span is (otlp.Span)
    """A call to a model as its span reports it (provider-reported tokens)."""

    span: Span
    model: str
    provider: str
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    conversation: str  # gen_ai.conversation.id, "" when absent
    requested: tuple[str, ...]  # the tool call ids its output requested, where captured
    usage_kind: str = PROVIDER  # what its token counts are (USAGE_KINDS)


class ToolCall(msgspec.Struct, gc=False):  # untracked by the cycle collector, as its span is (otlp.Span)
    """A call to a tool as its span reports it; arguments and result are None where content was not captured."""

    span: Span
    tool: str
    call_id: str
    arguments: str | None
    result: str | None
    is_error: bool
    convention: str  # "gen_ai", "mcp" or "openllmetry"
    conversation: str


def _first(attributes: dict[str, object], names: tuple[str, ...]) -> Any:
    for name in names:
        value = attributes.get(name)
        if value is not None:
            return value
    return None


def _tokens(attributes: dict[str, object], names: tuple[str, ...], required: bool) -> int:
    value = _first(attributes, names)
    if value is None:
        if required:
            raise SpanIncomplete(names[0])
        return 0
    number: int | None = None
    if isinstance(value, str):
        number = otlp.decimal(value)  # "²" is a digit, not a decimal one
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    if number is None:
        raise SpanIncomplete(f"{names[0]} as a whole number (it is {str(value)[:40]!r})")
    if number not in otlp.COUNT:
        raise SpanIncomplete(f"{names[0]} between 0 and 2**63 - 1 (it is {str(value)[:40]})")
    return number


def _text(value: object) -> str | None:
    """A captured value as the text the tool received or returned (JSON kept as written, structures re-encoded)."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def messages(attributes: dict[str, object], attribute: str) -> list[dict[str, Any]]:
    """A captured message list (gen_ai.input.messages or gen_ai.output.messages) as dicts; [] when not captured."""
    raw = attributes.get(attribute)
    try:
        decoded = otlp.decoded(raw) if isinstance(raw, str) else raw  # read for texts and ids: orjson's reading
    except otlp.NOT_JSON:
        return []
    return [m for m in decoded if isinstance(m, dict)] if isinstance(decoded, list) else []


def _requested(attributes: dict[str, object]) -> tuple[str, ...]:
    """The tool call ids in a model call's captured output messages (gen_ai.output.messages), where present."""
    return tuple(
        part["id"]
        for message in messages(attributes, "gen_ai.output.messages")
        for part in _listed(message.get("parts"))
        if isinstance(part, dict) and part.get("type") == "tool_call" and isinstance(part.get("id"), str)
    )


def _listed(value: object) -> list[object]:
    """A captured list as it stands; anything else (absent, a number, an object) as no items."""
    return value if isinstance(value, list) else []


def model_call(span: Span) -> ModelCall | None:
    """The model call a span records, None when it records none; SpanIncomplete when it lacks its tokens."""
    a = span.attributes
    operation = a.get("gen_ai.operation.name")
    if not (type(operation) is str and operation in MODEL_OPERATIONS) and a.get("llm.request.type") != "chat":
        return None  # an operation of another type (a list, say) is no model's: a set cannot hold it to compare
    return ModelCall(
        span=span,
        model=str(_first(a, ("gen_ai.response.model", "gen_ai.request.model")) or ""),
        provider=str(_first(a, ("gen_ai.provider.name", "gen_ai.system")) or ""),
        input_tokens=_tokens(a, INPUT_TOKENS, required=True),
        output_tokens=_tokens(a, OUTPUT_TOKENS, required=True),
        cached_input_tokens=_tokens(a, CACHED_TOKENS, required=False),
        conversation=str(a.get(CONVERSATION) or ""),
        requested=_requested(a),
        usage_kind=usage_kind(a),
    )


def _mcp_tool(span: Span) -> str | None:
    """The tool an MCP `tools/call` span names: gen_ai.tool.name, else the last word of `tools/call {tool}`."""
    name = span.attributes.get("gen_ai.tool.name")
    if name:
        return str(name)
    head, _, tool = span.name.rpartition(" ")
    return tool if head.endswith(MCP_TOOLS_CALL) and tool else None


def _openllmetry_io(span: Span) -> tuple[str | None, str | None]:
    """The arguments and result OpenLLMetry captured: `traceloop.entity.input` holds {"tool_name", "arguments"}
    and `.output` the result (a {"result": text} object, or the tool's own result), each JSON in a string."""
    raw_in, raw_out = span.attributes.get("traceloop.entity.input"), span.attributes.get("traceloop.entity.output")
    arguments = result = None
    if isinstance(raw_in, str):
        try:
            decoded = otlp.loads(raw_in)
            if isinstance(decoded, dict) and "arguments" in decoded:  # the MCP instrumentation's
                arguments = _text(decoded["arguments"])
            elif isinstance(decoded, dict) and "kwargs" in decoded:  # the traceloop SDK's @tool decorator's
                arguments = _text(decoded["kwargs"]) if decoded["kwargs"] else None
            else:
                arguments = _text(decoded)
        except otlp.NOT_JSON:
            arguments = raw_in
    if isinstance(raw_out, str):
        try:
            decoded = otlp.loads(raw_out)
            inner = decoded.get("result") if isinstance(decoded, dict) and "result" in decoded else decoded
            result = _text(inner)
        except otlp.NOT_JSON:
            result = raw_out
    return arguments, result


def tool_call(span: Span) -> ToolCall | None:
    """The tool call a span records, under whichever convention names it, None when it records none;
    SpanIncomplete when it names no tool."""
    a = span.attributes
    operation, method = a.get("gen_ai.operation.name"), a.get("mcp.method.name")
    if operation != "execute_tool" and method != MCP_TOOLS_CALL and a.get("traceloop.span.kind") != "tool":
        return None  # most spans: decided before anything else is read
    conversation = str(a.get(CONVERSATION) or "")
    is_error = span.failed or bool(a.get("error.type"))
    call_id = str(a.get("gen_ai.tool.call.id") or "")
    if operation == "execute_tool" and method is None:
        tool = a.get("gen_ai.tool.name")
        if not tool:
            raise SpanIncomplete("gen_ai.tool.name")
        arguments, result = _text(a.get("gen_ai.tool.call.arguments")), _text(a.get("gen_ai.tool.call.result"))
        return ToolCall(span, str(tool), call_id, arguments, result, is_error, "gen_ai", conversation)
    if method == MCP_TOOLS_CALL:
        tool = _mcp_tool(span)
        if not tool:
            raise SpanIncomplete("gen_ai.tool.name")
        arguments, result = _text(a.get("gen_ai.tool.call.arguments")), _text(a.get("gen_ai.tool.call.result"))
        return ToolCall(span, tool, call_id, arguments, result, is_error, "mcp", conversation)
    if a.get("traceloop.span.kind") == "tool":
        tool = a.get("traceloop.entity.name") or span.name.removesuffix(".tool")
        if not tool:
            raise SpanIncomplete("traceloop.entity.name")
        arguments, result = _openllmetry_io(span)
        return ToolCall(span, str(tool), call_id, arguments, result, is_error, "openllmetry", conversation)
    return None
