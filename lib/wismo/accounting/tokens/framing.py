"""Client profiles: how a client turns MCP tools/list entries and tools/call results into what the model reads.

A profile has two jobs: `function(tool)` gives the function definition the client sends for one tools/list entry,
and `output(result)` gives the function output text it sends for one CallToolResult (the MCP wire form, a dict
with "content" and optionally "structuredContent", "isError" and "_meta"). `turn_addition` then counts what one
tool turn adds to the next request under a profile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from wismo.accounting import tokens
from wismo.accounting.tokens import stjson
from wismo.core import jsonfmt
from wismo.core.errors import InputError


class FramingError(InputError):
    """A result or definition the profile cannot frame; the message names what was wrong."""


def text_result(text: str, is_error: bool | None = None) -> dict[str, object]:
    """A CallToolResult of one text block as it travels over MCP (isError only when the server sends it)."""
    result: dict[str, object] = {"content": [{"type": "text", "text": text}]}
    if is_error is not None:
        result["isError"] = is_error
    return result


def framed_items(items: list[dict[str, Any]], profile: Profile) -> list[dict[str, object]]:
    """A conversation's input items as a client profile sends them: each function_call_output's text (one text
    block, as wismo's loop records it) framed as the profile frames a result; every other item as it is."""
    if profile.output is _only_text:
        return items
    return [
        tokens.function_call_output(i["call_id"], profile.output(text_result(i["output"])))
        if i.get("type") == "function_call_output"
        else i
        for i in items
    ]


def _only_text(result: dict[str, object]) -> str:
    """The single text block of a result; wismo's loop refuses anything else, and so does this profile."""
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1 or content[0].get("type") != "text":
        kinds = [b.get("type") for b in content] if isinstance(content, list) else content
        raise FramingError(f"the python profile frames one text block per result, got content {kinds!r}")
    return cast("str", content[0]["text"])


# Property order of MCP C# SDK 2.2.0's content blocks (ContentBlock.Converter.Write): "type", the kind's own
# fields, then "annotations" and "_meta" when set. Kinds not listed here keep their wire order.
_BLOCK_FIELDS = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource": ("resource",),
    "resource_link": ("uri", "name", "title", "description", "mimeType", "size", "icons"),
}


def _csharp_block(block: dict[str, Any]) -> dict[str, Any]:
    """One content block in the order the C# SDK's converter writes it."""
    fields = _BLOCK_FIELDS.get(block.get("type", ""))
    if fields is None:
        return dict(block)
    ordered = {"type": block["type"]}
    for key in (*fields, "annotations", "_meta"):
        if block.get(key) is not None:
            ordered[key] = block[key]
    return ordered


def csharp_call_tool_result(result: dict[str, Any]) -> dict[str, object]:
    """A CallToolResult as the C# SDK serializes it: content, structuredContent, isError, then the base class's
    _meta and resultType (System.Text.Json writes a base class's properties last); nulls left out."""
    if not isinstance(result.get("content"), list):
        raise FramingError(f"a CallToolResult needs a 'content' list, got {type(result.get('content')).__name__}")
    ordered: dict[str, object] = {"content": [_csharp_block(b) for b in result["content"]]}
    for key in ("structuredContent", "isError", "_meta", "resultType"):
        if result.get(key) is not None:
            ordered[key] = result[key]
    return ordered


def csharp_function(tool: dict[str, Any]) -> dict[str, Any]:
    """A tools/list entry as Microsoft.Extensions.AI.OpenAI sends it: the schema round-tripped through its ToolJson
    type, which writes type, required, properties and additionalProperties (false unless given) first."""
    schema = tool.get("inputSchema") or {"type": "object"}
    if not isinstance(schema.get("type", "object"), str):
        raise FramingError(f"{tool.get('name')}: ToolJson reads 'type' as one string, got {schema['type']!r}")
    declared = ("type", "required", "properties", "additionalProperties")
    parameters = {
        "type": schema.get("type", "object"),
        "required": list(dict.fromkeys(schema.get("required", []))),  # a HashSet: duplicates go
        "properties": schema.get("properties", {}),
        "additionalProperties": schema.get("additionalProperties", False),
        **{k: v for k, v in schema.items() if k not in declared},  # [JsonExtensionData], written after
    }
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool.get("description") or "",
        "parameters": parameters,
        "strict": False,
    }


def csharp_output(result: dict[str, object], newline: str = "\n") -> str:
    """The function output Microsoft.Extensions.AI.OpenAI sends for ToChatMessage's FunctionResultContent: the
    JsonElement re-serialized with AIJsonUtilities.DefaultOptions (indented, UnsafeRelaxedJsonEscaping)."""
    element = csharp_call_tool_result(result)
    # SerializeToElement escaped the strings; writing the element out unescapes them (JsonDocument.WriteString)
    # and the relaxed encoder escapes again, so only the first pass's U+FFFD substitution survives.
    return stjson.dumps(jsonfmt.well_formed_value(element), stjson.RELAXED, indented=True, newline=newline)


def indented_default_output(result: dict[str, object]) -> str:
    """The envelope as the Microsoft.Extensions.AI.OpenAI packages before 9.3.0-preview.1.25114.11 would have written
    it: indented, with System.Text.Json's default encoder (AIJsonUtilities.DefaultOptions set no relaxed encoder
    before commit 11ccd68ee3). None of those packages has a Responses client."""
    element = csharp_call_tool_result(result)
    return stjson.dumps(jsonfmt.well_formed_value(element), stjson.DEFAULT, indented=True)


def element_raw_text(result: dict[str, object]) -> str:
    """The raw text of ToChatMessage's JsonElement: the CallToolResult compact, escaped by System.Text.Json's
    default encoder (McpJsonUtilities.DefaultOptions sets no encoder)."""
    return stjson.dumps(csharp_call_tool_result(result), stjson.DEFAULT)


@dataclass(frozen=True)
class Profile:
    """One client's framing of definitions and results, with where each rule comes from."""

    name: str
    description: str
    source: str
    function: Callable[[dict[str, object]], dict[str, object]]
    output: Callable[[dict[str, object]], str]


PYTHON = Profile(
    name="python",
    description="wismo's own agent loop: the definition as the article prints it, the single text block as it is.",
    source=(
        "wismo: lib/wismo/tokens/counting.py mcp_tool_to_function (definitions); lib/wismo/agent/loop.py and "
        "lib/wismo/client/connection.py Connection.call (one text block, sent as the function output unchanged)"
    ),
    function=tokens.mcp_tool_to_function,
    output=_only_text,
)

CSHARP_RELAXED = Profile(
    name="csharp-relaxed",
    description=(
        "The article's runner as the released sources of its adapter say it behaves: MCP C# SDK 2.2.0 "
        "CallToolResult.ToChatMessage(callId), sent by Microsoft.Extensions.AI.OpenAI 10.8.3 (what csharp-sdk v2.2.0 "
        "builds against) over the Responses API: the whole CallToolResult as indented JSON with relaxed escaping, as "
        "every release of that Responses client (from 9.4.0-preview.1.25207.5) writes it."
    ),
    source=(
        "modelcontextprotocol/csharp-sdk v2.2.0: src/ModelContextProtocol.Core/AIContentExtensions.cs "
        "ToChatMessage (FunctionResultContent with JsonSerializer.SerializeToElement(result, "
        "McpJsonUtilities.DefaultOptions)), Protocol/CallToolResult.cs, Protocol/ContentBlock.cs Converter.Write, "
        "Client/McpClientTool.cs (JsonSchema = InputSchema); dotnet/extensions v10.8.3: "
        "src/Libraries/Microsoft.Extensions.AI.OpenAI/OpenAIResponsesChatClient.cs (FunctionResultContent -> "
        "JsonSerializer.Serialize(Result, AIJsonUtilities.DefaultOptions)), OpenAIClientExtensions.cs "
        "ToOpenAIFunctionParameters and ToolJson, Microsoft.Extensions.AI.Abstractions/Utilities/"
        "AIJsonUtilities.Defaults.cs (WriteIndented, UnsafeRelaxedJsonEscaping); dotnet/runtime: "
        "JsonDocument.WriteString (unescape, then the writer's encoder)"
    ),
    function=csharp_function,
    output=csharp_output,
)

CSHARP_RAW_ELEMENT = Profile(
    name="csharp-raw-element",
    description=(
        "The article's runner (MCP C# SDK CallToolResult.ToChatMessage(callId)): the whole CallToolResult "
        "as the raw text of its JsonElement, compact, escaped by System.Text.Json's default encoder "
        "(\" as \\u0022, + < > & ' ` and all non-ASCII as \\uXXXX). A hypothesis, not an observed behaviour: "
        "it is the framing that best fits the article's granular turns, but no released Microsoft.Extensions.AI.OpenAI "
        "sends the element's raw text unchanged (every release with a Responses client re-serializes it indented and "
        "relaxed: profile csharp-relaxed), and the article's focused conversation leaves it too few tokens for the "
        "least plausible output, by a margin inside the fits' tolerance (notebook 02 §5)."
    ),
    source=(
        "modelcontextprotocol/csharp-sdk v2.2.0: src/ModelContextProtocol.Core/AIContentExtensions.cs "
        "ToChatMessage and McpJsonUtilities.cs (no Encoder set: the writer's default escaping); "
        "modelcontextprotocol/csharp-sdk issue #962 (a tool result reaching the model as this text); dotnet/runtime: "
        "System.Text.Json JsonWriterHelper.Escaping.cs, System.Text.Encodings.Web DefaultJavaScriptEncoder.cs"
    ),
    function=csharp_function,
    output=element_raw_text,
)

PROFILES = {p.name: p for p in (PYTHON, CSHARP_RAW_ELEMENT, CSHARP_RELAXED)}


def profile(name: str) -> Profile:
    """The client profile called `name`."""
    try:
        return PROFILES[name]
    except KeyError:
        raise FramingError(f"unknown client profile {name!r}; known: {', '.join(PROFILES)}") from None


@dataclass(frozen=True)
class TurnAddition:
    """The input tokens one tool turn adds to the next request, by part, labelled with how they were counted."""

    profile: str
    method: str
    encoding: str
    calls: int
    outputs: int

    @property
    def total(self) -> int:
        """Function-call items and framed outputs together."""
        return self.calls + self.outputs

    def as_dict(self) -> dict[str, object]:
        """The figures with their labels, for a report."""
        return {
            "profile": self.profile,
            "method": self.method,
            "encoding": self.encoding,
            "label": tokens.LABEL,
            "calls": self.calls,
            "outputs": self.outputs,
            "total": self.total,
        }


def turn_addition(
    calls: list[dict[str, Any]],
    results: list[dict[str, Any]],
    client: Profile,
    encoding_name: str = tokens.DEFAULT_ENCODING,
) -> TurnAddition:
    """Tokens a turn adds: its function_call items and their outputs as `client` frames them, counted as items
    the cookbook way."""
    if len(calls) != len(results):
        raise FramingError(
            f"a turn needs one result per function call, got {len(calls)} calls and {len(results)} results"
        )
    outputs = [tokens.function_call_output(c["call_id"], client.output(r)) for c, r in zip(calls, results)]
    return TurnAddition(
        profile=client.name,
        method=tokens.COOKBOOK_GPT4O.name,
        encoding=encoding_name,
        calls=sum(tokens.count_item(c, encoding_name) for c in calls),
        outputs=sum(tokens.count_item(o, encoding_name) for o in outputs),
    )
