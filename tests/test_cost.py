"""The cumulative-context model reproduces the case study exactly."""

import pytest

from wismo.accounting import cost
from wismo.core import reference
from wismo.core.errors import ClaimFailed
from wismo.reports import case_study as case_study_report


def test_case_study_numbers():
    broad, scoped = cost.uniform(6000, 18000, 7), cost.uniform(6000, 1500, 7)
    assert broad.inputs == (6000, 24000, 42000, 60000, 78000, 96000, 114000)
    assert (broad.total, broad.final) == (420000, 114000)
    assert (scoped.total, scoped.final) == (73500, 15000)
    assert round(cost.ratio(broad, scoped), 1) == 5.7
    assert cost.next_call_input(broad, 18000) == 132000 and cost.next_call_input(scoped, 1500) == 16500
    assert scoped.total <= 75000 < broad.total


def test_window_failure_point():
    # Seven calls fit in 128,000; the call after a seventh tool result (call 8) carries 132,000 and fails.
    assert cost.uniform(6000, 18000, 7).first_over(128000) is None
    assert cost.uniform(6000, 18000, 8).first_over(128000) == 8
    assert cost.first_failing_calls(6000, 18000, 128000) == 8
    assert cost.first_failing_calls(6000, 1500, 128000) == 83
    assert cost.uniform(6000, 1500, 82).first_over(128000) is None
    assert cost.uniform(6000, 1500, 83).first_over(128000) == 83
    assert cost.first_failing_calls(200000, 10, 128000) == 1


def test_general_form_with_measured_turns():
    s = cost.session(549, [129, 354])
    assert s.inputs == (549, 678, 1032) and s.total == 2259 and s.cumulative() == [549, 1227, 2259]
    assert cost.session(100, []).inputs == (100,)
    with pytest.raises(ValueError):
        cost.uniform(6000, 1500, 0)


def test_sweep_marks_overflow():
    grid = cost.sweep(6000, [1500, 18000], [7, 8], 128000)
    marks = {(g["r"], g["calls"]): g["overflows"] for g in grid}
    assert marks == {(1500, 7): False, (1500, 8): False, (18000, 7): False, (18000, 8): True}


def test_reproduction_is_checked_against_the_reference_file():
    ref = reference.load("context-budget-case-study")
    cs = case_study_report.case_study_from_reference(ref)
    assert all(row["match"] for row in case_study_report.check_case_study(cs, ref["published"]))
    wrong = dict(ref["published"], scopedTotal=73000)
    with pytest.raises(ClaimFailed, match="scopedTotal: computed 73500 but the case study published 73000"):
        case_study_report.check_case_study(cs, wrong)
    changed = case_study_report.case_study(6000, (18000, 2000), 7, 128000, 75000)
    assert case_study_report.reproduce(changed, ref) is None
