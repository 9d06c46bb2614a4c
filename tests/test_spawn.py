"""A stdio server started before the SDK is imported (client/spawn.py): started once, with the environment the SDK
gives, adopted by the SDK's own stdio client, and killed when nobody adopted it."""

import json
import os
import subprocess
import sys

import pytest

from wismo.audit import measure
from wismo.audit.target import TargetError, target
from wismo.client.connection import connect, server_command
from wismo.client.spawn import CLIENT_ENV_KEYS, client_env, spawned

pytestmark = pytest.mark.anyio

# Run in a new interpreter, so that what it has imported when it spawns is its own doing: every process start is
# recorded with whether the SDK's stdio client was imported at that moment.
MEASURED_ONCE = """
import json, sys
import anyio
from wismo.audit import measure, target

starts = []
real = anyio.open_process

async def recorded(command, **kwargs):
    starts.append({"sdkImported": "mcp.client.stdio" in sys.modules, "command": list(command)})
    return await real(command, **kwargs)

anyio.open_process = recorded
measured = anyio.run(measure.measure, target.target(sys.argv[1:], None))
print(json.dumps({"starts": starts, "tools": [t["name"] for t in measured["tools"]]}))
"""


def test_the_environment_is_the_one_the_sdk_gives_a_stdio_server(monkeypatch):
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

    assert tuple(DEFAULT_INHERITED_ENV_VARS) == CLIENT_ENV_KEYS
    monkeypatch.setenv("SHELL", "() { an exported shell function; }")  # passed on by neither
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("LOGNAME", raising=False)
    assert client_env() == get_default_environment() and "SHELL" not in client_env()


def test_wismo_tokens_starts_its_server_once_before_importing_the_sdk_which_adopts_it():
    command = server_command("focused")
    done = subprocess.run([sys.executable, "-c", MEASURED_ONCE, *command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    # One start: the SDK's client did not start a second server; before the SDK: the start overlapped its import.
    assert got["starts"] == [{"sdkImported": False, "command": command}]
    assert got["tools"] == ["get_order_support_context"]


async def test_a_server_nobody_adopted_is_killed_and_reaped_on_exit():
    async with spawned(["sleep", "100"]) as server:
        assert server is not None and server.process.returncode is None
        pid = server.process.pid
    assert server.process.returncode is not None and not server.adopted
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_command_that_cannot_be_started_is_left_for_connect_to_report(tmp_path):
    script = tmp_path / "not-a-program"
    script.write_bytes(b"\x00\x01 neither a binary nor a script\n")
    script.chmod(0o755)
    async with spawned([str(script)]) as server:
        assert server is None
    with pytest.raises(TargetError, match="^`.*not-a-program` could not be measured: .*Exec format error"):
        await measure.measure(target([str(script)], None), timeout_s=10)


async def test_a_process_started_for_another_command_is_not_adopted_the_sdk_starts_its_own_and_it_is_killed():
    import mcp.client.stdio as sdk_stdio

    sdk_spawn = sdk_stdio._create_platform_compatible_process
    async with spawned(["sleep", "100"]) as early:
        assert early is not None
        async with connect("focused", command=server_command("focused"), adopted=early) as conn:
            assert [t["name"] for t in await conn.list_tools()] == ["get_order_support_context"]
        assert not early.adopted and early.process.returncode is None
    assert early.process.returncode is not None
    assert sdk_stdio._create_platform_compatible_process is sdk_spawn  # the SDK's own spawn, restored
