"""The tests' raw MCP peer is the benchmark's (wismo.mcp.client.raw): one implementation of the bare wire."""

import sys
from pathlib import Path

from wismo.mcp.client.raw import RawServer, rest

WISMO = str(Path(sys.executable).parent / "wismo")  # the console script an MCP client configures

__all__ = ["WISMO", "RawServer", "rest"]
