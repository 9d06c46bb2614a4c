"""temporary_env: variables set inside the block, restored or removed after it, even when the block raises."""

import os

import pytest

from wismo.core.environ import temporary_env


def test_a_variable_set_for_a_block_is_removed_after_it(monkeypatch):
    monkeypatch.delenv("WISMO_TEST_VAR", raising=False)
    with temporary_env(WISMO_TEST_VAR="1"):
        assert os.environ["WISMO_TEST_VAR"] == "1"
    assert "WISMO_TEST_VAR" not in os.environ


def test_a_variable_that_was_set_gets_its_old_value_back_even_after_an_error(monkeypatch):
    monkeypatch.setenv("WISMO_TEST_VAR", "old")
    with pytest.raises(RuntimeError), temporary_env(WISMO_TEST_VAR="new"):
        assert os.environ["WISMO_TEST_VAR"] == "new"
        raise RuntimeError("inside")
    assert os.environ["WISMO_TEST_VAR"] == "old"


def test_none_leaves_a_variable_as_it_is(monkeypatch):
    monkeypatch.setenv("WISMO_TEST_VAR", "kept")
    with temporary_env(WISMO_TEST_VAR=None):
        assert os.environ["WISMO_TEST_VAR"] == "kept"
    assert os.environ["WISMO_TEST_VAR"] == "kept"
