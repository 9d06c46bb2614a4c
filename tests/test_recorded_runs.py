"""Notebook 03 for every study: what a study publishes of its conversations, read and checked."""

import shutil

import pytest

from commands import one_sentence
from wismo import cli, runs
from wismo.core.paths import REPO_ROOT
from wismo.runs import summaries
from wismo.studies import declaration
from wismo.studies.declaration import StudyInvalid

HELPDESK = REPO_ROOT / "tests" / "studies" / "helpdesk"


def _helpdesk(folder, extra_designs: str = "", tail: str = ""):
    """The helpdesk study copied into `folder` with its server, designs added before the cases and `tail` at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(HELPDESK / "helpdesk.py", folder / "helpdesk.py")
    text = (HELPDESK / "helpdesk.toml").read_text(encoding="utf-8")
    assert "\n[[cases]]" in text, "the helpdesk study no longer declares [[cases]]"
    path = folder / "helpdesk.toml"
    path.write_text(text.replace("\n[[cases]]", extra_designs + "\n[[cases]]", 1) + tail, encoding="utf-8")
    return path


def test_a_new_run_of_the_article_is_scored_as_the_shipped_ones_are(tmp_path):
    # Its manifest names the study, whose cases declare no expect: wismo's answer contract gives the expectations.
    assert cli.main(["evaluate", "both", "1", "--orders", "ORD-1004", "--runs-dir", str(tmp_path)]) == 0
    loaded = [runs.load(f) for f in runs.find(tmp_path)]
    assert [r.manifest["study"]["expectations"] for r in loaded] == [{}, {}]
    assert [r["passed"] for r in summaries.case_rows(loaded)] == [True, True]


def test_published_tool_calls_elapsed_time_and_the_elapsed_median_are_read_and_checked(tmp_path):
    published = declaration.article().published
    assert [(c.tool_calls, c.elapsed_s) for c in published.conversations] == [(5, 5.288), (1, 2.832)]
    assert published.median_elapsed_saving_percent == 33 and published.compared() == ("granular", "focused")
    tail = """
[published]
source = "a staging log"
model = "some-model"
median_elapsed_saving_percent = 10

[[published.conversations]]
design = "granular"
case = "T-1001"
calls = 3
tool_calls = 1.5

[[published.conversations]]
design = "granular"
case = "T-1002"
elapsed_s = "slow"

[[published.conversations]]
design = "granular"
case = "T-1002"
calls = 3
tool_calls = 2
elapsed_s = 1.25
"""
    with pytest.raises(StudyInvalid) as invalid:
        declaration.load(_helpdesk(tmp_path, tail=tail))
    problems = invalid.value.problems
    assert any("tool_calls must be a count (a whole number), not 1.5" in p for p in problems), problems
    assert any("elapsed_s must be a number of seconds, not 'slow'" in p for p in problems), problems
    assert any("median_elapsed_saving_percent sets one design against another" in p for p in problems), problems
    assert all(one_sentence(p) for p in problems), problems
