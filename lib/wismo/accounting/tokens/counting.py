"""Token counts by the OpenAI cookbook's method (tiktoken-estimated): texts, tool definitions, items, whole requests."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from wismo.accounting.tokens.encodings import DEFAULT_ENCODING, encoding


class _Counts:
    """Token counts of texts seen lately, least recently used dropped first, bounded by the characters kept.

    The same text is counted many times over: a tool result as a result, again inside its function_call_output
    item, and again in every later request that resends the history; a page's text once to fit it and once
    to check it. Counting is deterministic, so a remembered count is the count."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._counts: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()  # count_text may be called from several threads

    def get(self, key: tuple[str, str]) -> int | None:
        """The remembered count of (encoding name, text), or None."""
        with self._lock:
            count = self._counts.get(key)
            if count is not None:
                self._counts.move_to_end(key)
            return count

    def put(self, key: tuple[str, str], count: int) -> None:
        """Remember a count, forgetting the least recently used ones beyond the character bound."""
        size = len(key[1])
        if size > self.max_chars:
            return
        with self._lock:
            if key in self._counts:
                return
            self._counts[key] = count
            self._chars += size
            while self._chars > self.max_chars:
                (_, dropped), _ = self._counts.popitem(last=False)
                self._chars -= len(dropped)

    def clear(self) -> None:
        """Forget every count."""
        with self._lock:
            self._counts.clear()
            self._chars = 0


# 32 million characters: every result of the scale report's largest sweep, a few dozen MB at most.
_COUNTS = _Counts(max_chars=32_000_000)


def count_text(text: str, encoding_name: str = DEFAULT_ENCODING) -> int:
    """Tokens in a text (tiktoken-estimated); special-token strings are counted as plain text."""
    key = (encoding_name, text)
    count = _COUNTS.get(key)
    if count is None:
        # encode_ordinary is encode with every special-token string taken as plain text, without the checks.
        count = len(encoding(encoding_name).encode_ordinary(text))
        _COUNTS.put(key, count)
    return count


def mcp_tool_to_function(tool: dict[str, object]) -> dict[str, object]:
    """An MCP tools/list entry as the model receives it (Responses API): description verbatim, inputSchema as
    parameters, annotations left behind, exactly as the article shows for get_order."""
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool.get("description", ""),
        "parameters": tool["inputSchema"],
        "strict": False,
    }


@dataclass(frozen=True)
class Method:
    """Per-item overheads a provider adds around the text it tokenizes, with where the constants come from."""

    name: str
    source: str
    per_message: int = 3
    reply_priming: int = 3
    func_init: int = 7
    prop_init: int = 3
    prop_key: int = 3
    enum_init: int = -3
    enum_item: int = 3
    func_end: int = 12


COOKBOOK_GPT4O = Method(
    name="OpenAI cookbook, gpt-4o constants",
    source=(
        "OpenAI Cookbook, 'How to count tokens with tiktoken' (num_tokens_from_messages and num_tokens_for_tools): "
        "3 tokens per message, 3 to prime the reply; per function 7 at the start, 3 per properties block, 3 per "
        "property, -3 and 3 per item for enums, 12 at the end of the tools block. The cookbook reports a match with "
        "the API for gpt-4o; applying it to gpt-4.1-mini and to Responses API function_call and "
        "function_call_output items (each counted as one message of its name and arguments, or of its output) is "
        "wismo's assumption."
    ),
)


def count_function(
    function: dict[str, Any], encoding_name: str = DEFAULT_ENCODING, method: Method = COOKBOOK_GPT4O
) -> int:
    """Tokens of one function definition, without the tools block's closing overhead."""

    def text(s: str) -> int:
        return count_text(s, encoding_name)

    desc = function.get("description", "")
    tokens = method.func_init + text(f"{function['name']}:{desc[:-1] if desc.endswith('.') else desc}")
    properties = function.get("parameters", {}).get("properties", {})
    if properties:
        tokens += method.prop_init
        for key, prop in properties.items():
            tokens += method.prop_key
            if "enum" in prop:
                tokens += method.enum_init + sum(method.enum_item + text(str(v)) for v in prop["enum"])
            p_desc = prop.get("description", "")
            tokens += text(f"{key}:{prop.get('type', '')}:{p_desc[:-1] if p_desc.endswith('.') else p_desc}")
    return tokens


def count_tools(
    functions: list[dict[str, object]], encoding_name: str = DEFAULT_ENCODING, method: Method = COOKBOOK_GPT4O
) -> int:
    """Tokens of a whole tools block (every function plus the block's closing overhead); 0 for no tools."""
    if not functions:
        return 0
    return sum(count_function(f, encoding_name, method) for f in functions) + method.func_end


def count_item(item: dict[str, Any], encoding_name: str = DEFAULT_ENCODING, method: Method = COOKBOOK_GPT4O) -> int:
    """Tokens of one input item: a message, a function_call or a function_call_output."""
    kind = item.get("type", "message")
    if kind == "message":
        parts = [item["role"], item["content"]]
    elif kind == "function_call":
        parts = [item["name"], item["arguments"]]
    elif kind == "function_call_output":
        parts = [item["output"]]
    else:
        raise ValueError(f"cannot count an input item of type {kind!r}")
    return method.per_message + sum(count_text(p, encoding_name) for p in parts)


@dataclass(frozen=True)
class RequestCount:
    """The estimated input tokens of one model request, by part."""

    tools: int
    items: int
    priming: int

    @property
    def total(self) -> int:
        """All input tokens of the request."""
        return self.tools + self.items + self.priming


def count_request(
    instructions: str,
    functions: list[dict[str, Any]],
    items: list[dict[str, Any]],
    encoding_name: str = DEFAULT_ENCODING,
    method: Method = COOKBOOK_GPT4O,
) -> RequestCount:
    """Input tokens of a request: instructions (as a system message), tool definitions and every input item."""
    messages = [{"type": "message", "role": "system", "content": instructions}, *items]
    return RequestCount(
        tools=count_tools(functions, encoding_name, method),
        items=sum(count_item(i, encoding_name, method) for i in messages),
        priming=method.reply_priming,
    )
