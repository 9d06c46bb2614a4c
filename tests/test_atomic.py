"""A folder built out of sight and put in place whole (core/atomic.py): the old folder or the new one, never half."""

from __future__ import annotations

import pytest

from wismo.core import atomic


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_folder_built_then_put_in_place_replaces_the_old_one_and_leaves_nothing_beside_it(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with atomic.building(out, replace=True) as folder:
        assert folder.name.startswith(".out" + atomic.MARK) and folder.parent == tmp_path
        (folder / "new.txt").write_text("new")
        assert _tree(out) == {"old.txt": "old"}  # the old folder is whole until the block ends
    assert _tree(out) == {"new.txt": "new"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_failed_build_leaves_the_old_folder_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic.building(out, replace=True) as folder:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("the build failed")
    assert _tree(out) == {"old.txt": "old"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


@pytest.mark.parametrize("can_exchange", [True, False])
def test_replacing_without_an_exchange_gives_the_same_folder(tmp_path, monkeypatch, can_exchange):
    if not can_exchange:
        monkeypatch.setattr(atomic, "exchange", lambda a, b: False)  # a system without renameat2
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with atomic.building(out, replace=True) as folder:
        (folder / "new.txt").write_text("new")
    assert _tree(out) == {"new.txt": "new"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_folder_that_is_never_overwritten_is_not(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    staging = atomic.beside(run)
    (staging / "manifest.json").write_text('{"new": true}')
    with pytest.raises(FileExistsError, match="never overwritten"):
        atomic.put_in_place(staging, run)
    assert _tree(run) == {"manifest.json": "{}"} and _tree(staging) == {"manifest.json": '{"new": true}'}
