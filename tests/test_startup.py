"""A command's start with the cyclic collector paused: off in the block, back on (what it built frozen) after it, and
only in a process started as that command."""

import argparse
import gc
import sys

import pytest

from wismo.core.startup import collector_paused, started_as


@pytest.fixture
def collector():
    """The collector turned back on or off as the test found it. Nothing is unfrozen: the worker froze what its
    collection built (conftest), and the tests count only what they freeze themselves."""
    was_on = gc.isenabled()
    yield
    gc.enable() if was_on else gc.disable()


def _tracked_unfrozen(obj: object) -> bool:
    """Whether the collector still tracks obj: a freeze takes it out of every generation. (The freeze count cannot say
    "nothing was frozen": reference counting frees frozen objects too, so the count can fall in any test.)"""
    return any(o is obj for o in gc.get_objects())


def test_the_collector_is_off_in_the_block_and_on_after_it_with_what_it_built_frozen(collector):
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        built = [[] for _ in range(1000)]  # container objects, tracked by the collector
    assert gc.isenabled() and not _tracked_unfrozen(built[0]) and not _tracked_unfrozen(built[-1])


def test_a_collector_that_was_off_stays_off_and_a_nested_pause_ends_with_the_outer_one(collector):
    gc.disable()
    mine = []
    with collector_paused():
        pass
    assert not gc.isenabled() and _tracked_unfrozen(mine)
    gc.enable()
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled(), "the inner pause ended the outer one"
    assert gc.isenabled()


def test_an_error_in_the_block_still_turns_the_collector_back_on(collector):
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("an import failed")
    assert gc.isenabled()


def test_an_inactive_pause_changes_nothing(collector):
    gc.enable()
    mine = []
    with collector_paused(active=False):
        assert gc.isenabled()
    assert _tracked_unfrozen(mine)


def test_a_program_calling_the_commands_keeps_its_objects_unfrozen(collector, capsys):
    from wismo import cli

    gc.enable()
    mine = []
    assert not started_as("serve")  # this process is pytest
    assert cli.main(["peers", "out.json", "no-equals-sign"]) == 2  # the parse and dispatch, in this process
    assert gc.isenabled() and _tracked_unfrozen(mine)


@pytest.mark.parametrize(
    "argv, started",
    [
        (["/venv/bin/wismo", "tokens", "--", "srv"], True),
        (["/lib/wismo/__main__.py", "tokens"], True),
        (["/usr/bin/my-tool", "tokens", "--json"], False),  # a program whose own first argument is the command
        (["/lib/other/__main__.py", "tokens"], False),
        (["wismo", "serve"], False),
        ([""], False),
    ],
    ids=["the wismo script", "python -m wismo", "a program", "another package's -m", "another command", "no argv"],
)
def test_started_as_the_command_means_the_wismo_entry_point_with_that_command(monkeypatch, argv, started):
    monkeypatch.setattr(sys, "argv", argv)
    assert started_as("tokens") is started


@pytest.mark.parametrize(
    "argv, built_with_the_collector_on",
    [(["wismo", "serve", "focused"], False), (["a-program", "serve"], True)],
    ids=["started as wismo serve", "called by a program"],
)
def test_wismo_serve_builds_with_the_collector_paused_only_when_started_as_itself_and_serves_with_it_on(
    collector, monkeypatch, argv, built_with_the_collector_on
):
    import anyio

    from wismo.cli import serve

    seen = []
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(serve, "_built", lambda args: seen.append(("built", gc.isenabled())) or ("server", "limits"))
    monkeypatch.setattr(anyio, "run", lambda *_: seen.append(("served", gc.isenabled())))
    gc.enable()
    mine = []
    args = argparse.Namespace(design="focused", http=None, http_fd=None, max_sessions=None, session_idle_timeout=None)
    assert serve.run(args) == 0 and seen == [("built", built_with_the_collector_on), ("served", True)]
    if built_with_the_collector_on:  # a program calling serve: nothing of its own frozen
        assert _tracked_unfrozen(mine)
