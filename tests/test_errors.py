"""Errors: one base class, facts carried as attributes, one exception for a failed claim, one group unwrapper."""

import importlib
import inspect
import pickle
import pkgutil

import pytest

import wismo
from wismo.core.errors import ClaimFailed, WismoError, described, first_leaf, leaves, single
from wismo.domain import ORDER, TRACKING, InvalidIdentifier, RecordNotFound, load
from wismo.domain.ids import REASONS
from wismo.mcp.client.connection import connect
from wismo.mcp.client.failures import CAUSES, HarnessError
from wismo.mcp.client.process import free_port
from wismo.reports import check
from wismo.reports.analyses import comparison


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of the wismo package, by qualified name."""
    found = {}
    for module in pkgutil.walk_packages(wismo.__path__, "wismo."):
        if module.name.endswith(".__main__"):
            continue  # importing one runs its command line
        loaded = importlib.import_module(module.name)
        for _, cls in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.name:
                found[f"{module.name}.{cls.__qualname__}"] = cls
    return found


def test_every_exception_wismo_defines_is_a_wismo_error():
    classes = _exception_classes()
    # The walk reaches every layer: the exceptions of the lowest and the highest packages are among those found.
    for name in (
        "wismo.mcp.servers.designs.UnknownDesign",
        "wismo.mcp.client.failures.HarnessError",
        "wismo.reports.render.build.NotebookFailed",
    ):
        assert name in classes
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, WismoError))
    assert outside == []


def test_the_old_bases_are_kept_for_callers_that_catch_them():
    from wismo.accounting.cost.prices import UnknownModel
    from wismo.mcp.servers.designs import UnknownDesign
    from wismo.mcp.servers.paging import CursorError

    assert issubclass(UnknownDesign, ValueError) and issubclass(UnknownModel, LookupError)
    assert issubclass(CursorError, ValueError) and issubclass(ClaimFailed, AssertionError)


# HarnessError: provoked as tests/test_transports.py provokes them, checked by attribute, not by message.


async def _failure(**kwargs) -> HarnessError:
    with pytest.raises(HarnessError) as err:
        async with connect(**kwargs) as conn:
            await conn.call("get_order", {"orderId": "ORD-1001"})
    assert err.value.cause in CAUSES
    return err.value


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_missing_command_is_a_missing_command(transport):
    failure = await _failure(design="granular", transport=transport, command=["/nonexistent/wismo-server"])
    assert (failure.server, failure.transport, failure.cause) == ("granular", transport, "missing-command")
    assert failure.target == "/nonexistent/wismo-server"
    assert isinstance(failure.error, FileNotFoundError) and failure.exit_code is None


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_that_exits_at_start_says_so_with_its_stderr(transport):
    failure = await _failure(design="focused", transport=transport, env={"WISMO_FIXTURES": "/nonexistent/fixtures"})
    assert (failure.server, failure.transport, failure.cause) == ("focused", transport, "exited-at-start")
    assert "orders.json is missing" in failure.stderr
    if transport == "http":  # our own child process: its exit code is known
        assert failure.exit_code not in (None, 0) and failure.target.startswith("http://127.0.0.1:")
    else:  # the SDK owns a stdio server's process; the closed pipe is what we see
        assert failure.exit_code is None and failure.target.endswith("wismo serve focused")


@pytest.mark.anyio
async def test_an_http_endpoint_that_is_not_listening_is_not_listening():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    failure = await _failure(design="focused", transport="http", url=url, timeout_s=5)
    assert (failure.cause, failure.target, failure.stderr, failure.exit_code) == ("not-listening", url, "", None)
    assert type(failure.error).__name__ == "ConnectError"


@pytest.mark.anyio
async def test_an_unknown_transport_is_a_bad_transport():
    failure = await _failure(design="focused", transport="carrier-pigeon")
    assert (failure.server, failure.transport, failure.cause, failure.error) == (
        "focused",
        "carrier-pigeon",
        "bad-transport",
        None,
    )


def test_a_harness_error_keeps_its_facts_across_a_process_boundary():
    failure = HarnessError(
        "granular server over http: gone", server="granular", transport="http", cause="died-mid-session", exit_code=-9
    )
    again = pickle.loads(pickle.dumps(failure))
    assert (str(again), again.cause, again.exit_code, again.stderr) == (str(failure), "died-mid-session", -9, "")
    with pytest.raises(ValueError, match="cause 'gone' is not one of"):
        HarnessError("x", server="granular", transport="http", cause="gone")


def test_a_lookup_failure_carries_its_kind_identifier_and_reason():
    dataset = load()
    cases = [(None, "missing"), (7, "not-a-string"), ("", "empty"), ("X" * 65, "too-long"), ("ORD-12", "malformed")]
    for value, reason in cases:
        with pytest.raises(InvalidIdentifier) as err:
            dataset.get(ORDER, value)
        assert (err.value.kind, err.value.identifier, err.value.reason) == ("order", value, reason)
        assert err.value.message == str(err.value)
    with pytest.raises(RecordNotFound) as err:
        dataset.get(TRACKING, "TRK-9999-Z")
    assert (err.value.kind, err.value.identifier, err.value.reason) == ("tracking", "TRK-9999-Z", "not-found")
    assert {reason for _, reason in cases} | {"not-found"} == set(REASONS)


def test_a_failed_claim_carries_the_claim_and_the_detail():
    with pytest.raises(ClaimFailed) as err:
        check(2 > 3, "two exceeds three", "2 against 3")
    assert (err.value.claim, err.value.detail, str(err.value)) == (
        "two exceeds three",
        "2 against 3",
        "two exceeds three does not hold: 2 against 3",
    )
    assert check(3 > 2, "three exceeds two", "3 against 2") == "Checked: three exceeds two (3 against 2)."
    rows = [{"case": "partial delivery", "input": "ORD-1004", "same": False}, {"case": "x", "input": "y", "same": True}]
    with pytest.raises(ClaimFailed) as err:
        comparison.check_parity(rows, ["stdio", "http"])
    assert err.value.detail == "partial delivery (ORD-1004)" and "stdio, http" in err.value.claim
    assert str(err.value) == "1 case(s) differ between stdio, http: partial delivery (ORD-1004)"
    again = pickle.loads(pickle.dumps(err.value))
    assert (again.claim, again.detail, str(again)) == (err.value.claim, err.value.detail, str(err.value))


def test_the_group_helpers_unwrap_nested_groups():
    first, second, third = KeyError("a"), ValueError("b"), TimeoutError()
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [first, second]), BaseExceptionGroup("more", [third])])
    assert leaves(nested) == [first, second, third]
    assert first_leaf(nested) is first and first_leaf(second) is second and leaves(second) == [second]
    assert single(ExceptionGroup("one", [ExceptionGroup("only", [second])])) is second
    assert single(nested) is nested  # several members: no one of them is the failure
    assert described(nested) == "KeyError: 'a'" and described(third) == "TimeoutError"
