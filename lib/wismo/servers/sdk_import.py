"""The MCP SDK's server modules without its package __init__s, for a process that serves stdio and does nothing else.

Python runs a package's __init__ before any of its submodules. The SDK's `mcp/__init__` imports its client (httpx
with it) and `mcp/server/__init__` its high-level MCPServer, neither of which the low-level server, its serve loop
or its stdio transport imports or needs: measured on 2026-12-02 (2 shared, busy cores, 20 starts), skipping them
took a stdio server's start from 3.05 to 2.60 times the protocol-types floor. The submodules themselves load as
usual, so the SDK's own Server class and serve loop still do all the serving.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

PACKAGES = ("mcp", "mcp.server", "mcp.server.lowlevel")


def skip_package_inits() -> bool:
    """Register mcp, mcp.server and mcp.server.lowlevel as bare packages whose __init__ never runs, unless one is
    imported already; whether it did. Afterwards `from mcp import Client` fails in this process, so only a process
    started to serve may call it."""
    if any(name in sys.modules for name in PACKAGES):
        return False
    spec = importlib.util.find_spec("mcp")  # a top-level package is found without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return False
    root = list(spec.submodule_search_locations)[0]
    for name in PACKAGES:
        bare = importlib.machinery.ModuleSpec(name, None, is_package=True)
        bare.submodule_search_locations = [os.path.join(root, *name.split(".")[1:])]
        module = importlib.util.module_from_spec(bare)
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    return True
