"""A bare JSON-lines MCP peer for tests that must see the wire exactly (no SDK in between)."""

from __future__ import annotations

import json
import select
import subprocess
from pathlib import Path
from typing import Any

import sys

WISMO = str(Path(sys.executable).parent / "wismo")


class RawServer:
    """A server process spoken to line by line; every read has a deadline, so a test cannot hang."""

    def __init__(self, design: str, env: dict[str, str] | None = None, cwd: str = "/") -> None:
        self.proc = subprocess.Popen(
            [WISMO, "serve", design], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env if env is not None else {"PATH": "/usr/bin:/bin", "HOME": "/root"}, cwd=cwd,
        )
        self.next_id = 1

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 15.0) -> dict[str, Any]:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer within {timeout} s"
        line = self.proc.stdout.readline()
        assert line, "server closed stdout"
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.send(message)
        return self.recv()

    def handshake(self, revision: str = "2025-11-25") -> dict[str, Any]:
        answer = self.request("initialize", {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> int:
        self.proc.stdin.close()
        try:
            return self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stdout.close()
            self.proc.stderr.close()

    def __enter__(self) -> "RawServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
