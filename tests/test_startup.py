"""A command's start with the cyclic collector paused: off in the block, back on (what it built frozen) after it."""

import argparse
import gc

import pytest

from wismo.core.startup import collector_paused


@pytest.fixture
def collector():
    """The collector as the test found it, and nothing frozen by the test left frozen."""
    was_on = gc.isenabled()
    yield
    gc.unfreeze()
    gc.enable() if was_on else gc.disable()


def test_the_collector_is_off_in_the_block_and_on_after_it_with_what_it_built_frozen(collector):
    gc.enable()
    gc.unfreeze()
    with collector_paused():
        assert not gc.isenabled()
        built = [[] for _ in range(1000)]  # container objects, tracked by the collector
    assert gc.isenabled() and gc.get_freeze_count() >= len(built)


def test_a_collector_that_was_off_stays_off_and_a_nested_pause_ends_with_the_outer_one(collector):
    gc.disable()
    gc.unfreeze()
    with collector_paused():
        pass
    assert not gc.isenabled() and gc.get_freeze_count() == 0
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


def test_wismo_serve_serves_with_the_collector_on(collector, monkeypatch):
    import anyio

    from wismo.cli import serve

    seen = []
    monkeypatch.setattr(anyio, "run", lambda *_: seen.append(gc.isenabled()))
    gc.enable()
    args = argparse.Namespace(design="focused", http=None, http_fd=None, max_sessions=None, session_idle_timeout=None)
    assert serve.run(args) == 0 and seen == [True]
