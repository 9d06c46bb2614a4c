"""The MCP SDK's server modules without its package __init__s or its HTTP modules, for a process that serves stdio
and does nothing else.

Python runs a package's __init__ before any of its submodules. The SDK's `mcp/__init__` imports its client (httpx
with it) and `mcp/server/__init__` its high-level MCPServer, neither of which the low-level server, its serve loop
or its stdio transport imports or needs: measured on 2026-12-02 (2 shared, busy cores, 20 starts), skipping them
took a stdio server's start from 3.05 to 2.60 times the protocol-types floor. The submodules themselves load as
usual, so the SDK's own Server class and serve loop still do all the serving.

`mcp.server.lowlevel.server` also imports, by name, Starlette, the SDK's auth and its Streamable HTTP transport,
which only its `streamable_http_app()` uses. `import_server_without_http()` imports that module with them deferred:
each name it takes from them is a stand-in that imports the real module the first time it is called or read. The
deferral ends with that import, so whatever is imported later (a design file using Starlette or the SDK's
high-level server) gets the real modules.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

PACKAGES = ("mcp", "mcp.server", "mcp.server.lowlevel")
# What mcp.server.lowlevel.server imports for streamable_http_app() alone (the names it takes from each are used in
# that method, in annotations, and as its parameters' defaults).
HTTP_ONLY = (
    "starlette.applications",
    "starlette.middleware",
    "starlette.middleware.authentication",
    "starlette.routing",
    "mcp.server.auth.middleware.auth_context",
    "mcp.server.auth.middleware.bearer_auth",
    "mcp.server.auth.provider",
    "mcp.server.auth.routes",
    "mcp.server.auth.settings",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.transport_security",
)


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


class _Deferred(types.ModuleType):
    """A module not loaded yet: every name taken from it is a `_Later`."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Later(self.__name__, name)


class _Later:
    """A name from a deferred module: calling it or reading an attribute of it imports the module and uses the real
    object."""

    def __init__(self, module: str, name: str) -> None:
        self._where = (module, name)

    def real(self) -> Any:
        """The object this stands for, its module imported (once) if need be."""
        module, name = self._where
        return getattr(importlib.import_module(module), name)  # the stand-ins are gone once the server is imported

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.real()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.real(), attribute)

    def __repr__(self) -> str:
        return f"<{'.'.join(self._where)}, not imported yet>"


def prepare_stdio_server() -> None:
    """What a process started to serve stdio, and nothing else, does before it imports the server: the SDK's package
    __init__s skipped, then its low-level server imported without its HTTP modules."""
    skip_package_inits()
    import_server_without_http()


def import_server_without_http() -> bool:
    """Import mcp.server.lowlevel.server with the modules in HTTP_ONLY deferred, then take the stand-ins out of
    sys.modules; whether it did (not when that module was imported already)."""
    if "mcp.server.lowlevel.server" in sys.modules:
        return False
    deferred = [name for name in HTTP_ONLY if name not in sys.modules]
    for name in deferred:
        sys.modules[name] = _Deferred(name)
    try:
        __import__("mcp.server.lowlevel.server")  # the import statement's own path, which -X importtime reports
    finally:
        for name in deferred:
            if isinstance(sys.modules.get(name), _Deferred):
                del sys.modules[name]
    return True
