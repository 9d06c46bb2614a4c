"""What a server wismo starts is given (mcp/client/process.py): the environment an MCP client gives a stdio server,
and a command that cannot be started said in one sentence, not a traceback."""

import pytest

from wismo.mcp.client.process import CLIENT_ENV_KEYS, client_env
from wismo.studies.audit import measure
from wismo.studies.audit.target import TargetError, target

pytestmark = pytest.mark.anyio


def test_the_environment_is_the_one_the_sdk_gives_a_stdio_server(monkeypatch):
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

    assert tuple(DEFAULT_INHERITED_ENV_VARS) == CLIENT_ENV_KEYS
    monkeypatch.setenv("SHELL", "() { an exported shell function; }")  # passed on by neither
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("LOGNAME", raising=False)
    assert client_env() == get_default_environment() and "SHELL" not in client_env()


async def test_a_command_that_cannot_be_started_is_said_in_one_sentence(tmp_path):
    script = tmp_path / "not-a-program"
    script.write_bytes(b"\x00\x01 neither a binary nor a script\n")
    script.chmod(0o755)
    with pytest.raises(TargetError, match="^`.*not-a-program` could not be measured: .*Exec format error"):
        await measure.measure(target([str(script)], None), timeout_s=10)
