"""The Responses API input items a tool turn adds: the model's function_call and the tool's function_call_output."""

from __future__ import annotations

import json
from typing import Any


def function_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A Responses API function_call item as the model emits it (arguments as compact JSON text)."""
    return {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments, separators=(",", ":")),
        "call_id": call_id,
    }


def function_call_output(call_id: str, output: str) -> dict[str, Any]:
    """A Responses API function_call_output item carrying a tool's text result."""
    return {"type": "function_call_output", "call_id": call_id, "output": output}
