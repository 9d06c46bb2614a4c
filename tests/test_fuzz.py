"""`make fuzz` is the one hostile engine at scale (qa/study_hostile.at_scale): a short pass over the article's real
servers, its record, what notebook 01 shows of it, and the one-sentence rule wismo's own tool errors keep."""

import json

import pytest

from wismo.checks import findings, study_hostile
from wismo.core.jsonfmt import write_stable
from wismo.reports import hostile as shown
from wismo.reports import study_hostile as sections
from wismo.studies.declaration import article

# Real server processes: these tests read the server's own memory and behaviour from its pid.
pytestmark = pytest.mark.usefixtures("real_servers")


@pytest.mark.slow
def test_a_short_make_fuzz_pass_finds_wismos_servers_well_and_the_report_shows_it(tmp_path):
    result = study_hostile.at_scale(article(), 20, sessions=40)
    assert result["findings"] == [] and study_hostile.failures(result) == 0, result["findings"][:5]
    assert set(result["categories"]) == set(findings.CATEGORIES)  # wismo's own promises judged too
    designs = {d["design"]: d for d in result["designs"]}
    assert list(designs) == list(article().designs)
    for d in designs.values():
        assert d["servedHttp"]["cleanExit"] and set(d["servedHttp"]["cases"]) >= {"oversized body", "headers"}
        assert all(t["cases"] > 20 for t in d["arguments"].values())
    assert result["sessions"]["wismo"]["abandoned"] == 40 and result["sessions"]["sdkDefaults"]["abandoned"] == 40
    # Notebook 01 shows it only for the study it was run on.
    write_stable(tmp_path / "fuzz.json", result)
    loaded = shown.load(tmp_path, article())
    assert loaded is not None and shown.load(tmp_path, type("Other", (), {"path": tmp_path / "other.toml"})) is None
    assert "`make fuzz` runs the pass of the section above at scale" in shown.intro(loaded)
    assert "**granular**, **focused**" in shown.intro(loaded)
    headings = [said.split("\n")[0] for said, _ in sections.parts(loaded)]
    assert headings == ["### Frames over stdio", "### Requests to the HTTP side of the designs wismo serves"]
    assert "40 clients each opened a session" in shown.sessions_sentence(loaded)
    assert json.loads(json.dumps(loaded)) == loaded


def test_a_clear_error_is_one_sentence():
    assert findings.one_sentence("Order ORD-9999 was not found.")
    assert not findings.one_sentence("Traceback (most recent call last):\n  File ...")
    assert not findings.one_sentence("no full stop")
    assert not findings.one_sentence("x" * 400 + ".")


def test_report_section_without_a_run(tmp_path):
    assert shown.load(tmp_path) is None
    assert shown.left_out(tmp_path).endswith("`make fuzz`, then `make report`")
