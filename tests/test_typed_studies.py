"""Studies of servers that answer as servers nobody here wrote answer (tests/studies/shelf): a Python literal, lines
of text read with a typed pattern, and a clock in every record. Over real stdio servers: the three designs compare
equal only because the study reads each as it is and ignores the clock; two loans' due dates exchanged are a
difference under match = "equal" and under match = "text"."""

from __future__ import annotations

import json
import shutil

import pytest

from wismo.checks import study_hostile
from wismo.core import pairing
from wismo.core.errors import ClaimFailed
from wismo.core.paths import REPO_ROOT
from wismo.reports.analyses import comparison
from wismo.studies import declaration

SHELF = REPO_ROOT / "tests" / "studies" / "shelf"
SWAPPED = {"literal": {"SHELF_FAULT": "swap-due"}, "lines": {"SHELF_FAULT": "swap-due"}}


def variant(tmp_path, old: str, new: str):
    """The shelf study with one passage of its file replaced, beside a copy of its server."""
    text = (SHELF / "shelf.toml").read_text(encoding="utf-8")
    assert old in text
    shutil.copy(SHELF / "shelf.py", tmp_path / "shelf.py")
    path = tmp_path / "shelf.toml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def first(result, label):
    """A case's first difference."""
    (case,) = [c for c in result["cases"] if c["label"] == label]
    return case["differences"][0] if case["differences"] else None


@pytest.mark.anyio
async def test_a_literal_and_typed_lines_equal_json_rows_once_the_clock_is_ignored():
    result = await comparison.run(study=str(SHELF / "shelf.toml"))
    assert result["summary"]["allEqual"], [c["differences"][:1] for c in result["cases"]]
    assert comparison.check_equal(result).startswith("Checked: all 4 inputs")
    # The lines design's pattern reads nothing where the member has nothing on loan: said, not silent.
    (unread,) = result["unreadPatterns"]
    assert unread["design"] == "lines" and '"M-3 has nothing on loan."' in unread["sentence"]


@pytest.mark.anyio
async def test_without_ignore_the_clock_is_a_difference(tmp_path):
    study = variant(tmp_path, 'ignore = ["checkedAt"]\n', "")
    result = await comparison.run(study=str(study), unfriendly=False)
    assert first(result, "two loans")["path"] == "[0].checkedAt"


@pytest.mark.anyio
async def test_two_loans_due_dates_exchanged_differ_under_equal_with_typed_values():
    result = await comparison.run(study=str(SHELF / "shelf.toml"), env=SWAPPED, unfriendly=False)
    assert not result["summary"]["allEqual"]
    for label, due in (("two loans", "2026-12-09"), ("three loans", "2026-12-20")):
        d = first(result, label)
        assert d["path"] == "[0].due" and d["rows"] == due, d
    assert first(result, "nothing on loan") is None


@pytest.mark.anyio
async def test_two_loans_due_dates_exchanged_differ_under_text_kept_apart_from_their_records(tmp_path):
    # The lines read as plain text (no pattern): every text of every row still occurs somewhere.
    study = variant(tmp_path, 'reference = "rows"\n', 'reference = "rows"\nmatch = "text"\n')
    text = study.read_text(encoding="utf-8")
    start = text.index("pattern = '")
    study.write_text(text[:start] + 'read = "text" }\n' + text[text.index("\n", start) + 1 :], encoding="utf-8")
    held = await comparison.run(study=str(study), unfriendly=False)
    assert held["summary"]["allEqual"], [c["differences"][:1] for c in held["cases"]]
    result = await comparison.run(study=str(study), env=SWAPPED, unfriendly=False)
    (case,) = [c for c in result["cases"] if c["label"] == "two loans"]
    apart = {"path": "[0].due", "rows": "2026-12-09", "record": "[0]"}
    assert case["differences"] == [apart | {"literal": pairing.NOT_TOGETHER}, apart | {"lines": pairing.NOT_TOGETHER}]
    from wismo.reports.render import evidence

    # Under match = text a difference's path is the reference's only: its line is marked, no other design's.
    shown = evidence.evidence_view(result, "lead")._repr_html_()
    assert shown.count("<mark>") == 1 and "<mark>    &quot;due&quot;: &quot;2026-12-09&quot;,</mark>" in shown
    with pytest.raises(
        ClaimFailed, match=r"at \[0\]\.due, rows has \"2026-12-09\", which literal gives, but not together"
    ):
        comparison.check_equal(result)


def tools_called(log):
    """Every tool name a tools/call on the log's lines names (lines that are not JSON are skipped)."""
    names = set()
    for raw in log.read_bytes().splitlines():
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        for message in value if isinstance(value, list) else [value]:
            params = message.get("params") if isinstance(message, dict) else None
            if isinstance(params, dict) and isinstance(params.get("name"), str):
                names.add(params["name"])
    return names


def hostile_pass(tmp_path, ignore: bool):
    """The hostile pass (3 argument objects per tool) on the shelf's servers, each behind tee.py, with or without the
    study's ignore; the result and the bytes each design's server was sent."""
    shutil.copy(SHELF / "tee.py", tmp_path / "tee.py")
    study = variant(tmp_path, 'ignore = ["checkedAt"]\n', 'ignore = ["checkedAt"]\n' if ignore else "")
    text = study.read_text(encoding="utf-8")
    for design in ("rows", "literal", "lines"):
        old = f'command = ["{{python}}", "shelf.py", "{design}"]'
        text = text.replace(
            old, f'command = ["{{python}}", "tee.py", "{design}.log", "{{python}}", "shelf.py", "{design}"]'
        )
    study.write_text(text, encoding="utf-8")
    result = study_hostile.run(declaration.load(study), count=3)
    return result, {d: tmp_path / f"{d}.log" for d in ("rows", "literal", "lines")}


def test_the_hostile_pass_names_only_each_servers_own_tool_and_ignores_the_clock(tmp_path):
    result, logs = hostile_pass(tmp_path, ignore=True)
    own = {"rows": "get_loans", "literal": "read_loans", "lines": "list_loans"}
    for design, log in logs.items():
        sent = log.read_bytes()
        assert sent and b"get_order" not in sent and b"orderId" not in sent, design  # nothing of the article's
        assert tools_called(log) <= {own[design]}, (design, tools_called(log))
        assert b'"memberId"' in sent  # the frames carry the server's own argument
    assert [f for f in result["findings"] if f["category"] == "changed answer"] == []


def test_without_ignore_the_clock_makes_every_answer_a_changed_one(tmp_path):
    result, _ = hostile_pass(tmp_path, ignore=False)
    changed = {f["design"] for f in result["findings"] if f["category"] == "changed answer"}
    assert changed == {"rows", "literal", "lines"}


@pytest.mark.anyio
async def test_report_01_shows_each_designs_evidence_collapsed_with_its_own_first_difference_marked():
    from wismo.reports.render import evidence

    result = await comparison.run(
        study=str(SHELF / "shelf.toml"), env={"literal": SWAPPED["literal"]}, unfriendly=False
    )
    page = evidence.evidence_view(result)._repr_html_()
    blocks = page.split("<details>")[1:]
    assert len(blocks) == 3 and "<details open" not in page  # a case each, all collapsed
    two = blocks[0]
    assert two.startswith("<summary>two loans (&quot;M-1&quot;): differs first at [0].due (literal)</summary>")
    rows, literal, lines = two.split("<h4")[1:]
    # The reference's line and the differing design's are marked; the design that agrees is not.
    assert "<mark>    &quot;due&quot;: &quot;2026-12-09&quot;,</mark>" in rows
    assert "<mark>    &quot;due&quot;: &quot;2026-12-02&quot;,</mark>" in literal and "<mark>" not in lines
    assert "checkedAt" not in page  # what was compared: the ignored clock left out
    assert blocks[2].startswith("<summary>nothing on loan (&quot;M-3&quot;): agrees</summary>")
    # The reader's version shows the first case whose designs disagree; the full version every other.
    lead, rest = (evidence.evidence_view(result, part, "M-3")._repr_html_() for part in ("lead", "rest"))
    assert lead.count("<details>") == 1 and "two loans" in lead
    assert rest.count("<details>") == 2 and "two loans" not in rest
    agreeing = await comparison.run(study=str(SHELF / "shelf.toml"), unfriendly=False)
    assert "nothing on loan" in evidence.evidence_view(agreeing, "lead", "M-3")._repr_html_()  # else the focus case


@pytest.mark.slow  # starts a study run
def test_a_pattern_that_reads_nothing_in_every_case_is_exit_2_naming_it(tmp_path, capsys):
    from wismo import cli

    study = variant(tmp_path, "pattern = '^#(?P<id>", "pattern = '^NEVER #(?P<id>")
    out = tmp_path / "reports"
    assert cli.main(["study", "run", str(study), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert 'design "lines": entry (tool list_loans) read nothing with its pattern' in err, err
    assert "Traceback" not in err and not (out / "index.html").exists()  # said before any verdict


def test_a_numeric_key_names_its_cases_as_written_and_focus_takes_it(tmp_path):
    text = (SHELF / "shelf.toml").read_text(encoding="utf-8").replace('key = "memberId"\n', 'key = "n"\nfocus = 2\n')
    for n, member in enumerate(("M-1", "M-2", "M-3", "M-9"), start=1):
        text = text.replace(f'memberId = "{member}"\n', f'memberId = "{member}"\nn = {n}\n')
    shutil.copy(SHELF / "shelf.py", tmp_path / "shelf.py")
    (tmp_path / "shelf.toml").write_text(text, encoding="utf-8")
    study = declaration.load(tmp_path / "shelf.toml")
    assert [study.case_key(c) for c in study.cases] == ["1", "2", "3"] and study.focus_key == "2"
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("focus = 2\n", "focus = 7\n"), encoding="utf-8")
    with pytest.raises(
        declaration.StudyInvalid, match=r"focus names '7', which is no case's key; the keys are 1, 2, 3"
    ):
        declaration.load(bad)
