"""Token counts without a network: encodings, the cookbook's counting, items, harmony definitions, client framing.

The names below are the package's public API; framing, definitions, stjson and conversation are imported by name.
"""

from wismo.accounting.tokens.counting import (
    COOKBOOK_GPT4O,
    Method,
    RequestCount,
    count_function,
    count_item,
    count_request,
    count_text,
    count_tools,
    mcp_tool_to_function,
)
from wismo.accounting.tokens.encodings import (
    DEFAULT_ENCODING,
    LABEL,
    PACKAGE,
    PACKAGED_ENCODINGS,
    OfflineEncodingError,
    encoding,
    encoding_for_model,
    packaged_encoding_file,
)
from wismo.accounting.tokens.items import call_id, function_call, function_call_output

__all__ = [
    "COOKBOOK_GPT4O",
    "DEFAULT_ENCODING",
    "LABEL",
    "PACKAGE",
    "PACKAGED_ENCODINGS",
    "Method",
    "OfflineEncodingError",
    "RequestCount",
    "call_id",
    "count_function",
    "count_item",
    "count_request",
    "count_text",
    "count_tools",
    "encoding",
    "encoding_for_model",
    "function_call",
    "function_call_output",
    "mcp_tool_to_function",
    "packaged_encoding_file",
]
