"""A short pass of the property-based fuzzing over real stdio servers (`make fuzz` runs the long one)."""

import pytest

from wismo.core.jsonfmt import write_stable
from wismo.qa import fuzz
from wismo.reports import hostile

# Real server processes: these tests read the server's own memory and behaviour from its pid.
pytestmark = pytest.mark.usefixtures("real_servers")


@pytest.mark.slow
def test_every_tool_survives_hostile_arguments(tmp_path):
    result = fuzz.fuzz_all(examples=60)
    totals = result["totals"]
    assert (totals["crashes"], totals["hangs"], totals["unclearErrors"]) == (0, 0, 0), result
    assert totals["peakServerRssMb"] < fuzz.MEMORY_LIMIT_MB
    tools = {(d["design"], name): t for d in result["designs"] for name, t in d["tools"].items()}
    assert len(tools) == 6 and all(t["examples"] == 60 for t in tools.values())
    # Hostile input mostly fails, and each failure is a sentence of a known kind.
    assert all(sum(t["errors"].values()) > 30 for t in tools.values())
    assert all("other" not in t["errors"] for t in tools.values()), tools
    # The equivalence report shows these figures when fuzz.json is in its output folder.
    write_stable(tmp_path / "fuzz.json", result)
    fuzzed = hostile.load(tmp_path)
    sentence, rows = hostile.arguments_sentence(fuzzed), hostile.argument_rows(fuzzed)
    assert sentence.startswith(f"{totals['examples']:,} examples (60 per tool): 0 crashes, 0 hangs") and len(rows) == 6
    assert hostile.frames_sentence(fuzzed) is None and hostile.http_rows(fuzzed) == []  # not in this run


def test_error_kinds_and_sentences():
    assert fuzz.error_kind("orderId is required; give an order ID such as ORD-1001.") == "missing"
    assert fuzz.error_kind('orderId "x" is not an order ID; order IDs look like ORD-1001.') == "malformed"
    assert fuzz.error_kind("Order ORD-9999 was not found.") == "not found"
    assert fuzz.one_sentence("Order ORD-9999 was not found.")
    assert not fuzz.one_sentence("Traceback (most recent call last):\n  File ...")
    assert not fuzz.one_sentence("no full stop")


def test_report_section_without_a_run_and_with_one(tmp_path):
    assert hostile.load(tmp_path) is None
    assert "make fuzz" in hostile.arguments_sentence(None) and hostile.argument_rows(None) == []
    tools = {"get_order": {"examples": 3, "results": 1, "errors": {"not found": 2}}}
    write_stable(
        tmp_path / "fuzz.json",
        {
            "examplesPerTool": 3,
            "designs": [{"design": "granular", "tools": tools}],
            "totals": {"examples": 3, "crashes": 0, "hangs": 0, "unclearErrors": 0, "peakServerRssMb": 70.5},
        },
    )
    fuzzed = hostile.load(tmp_path)
    sentence, rows = hostile.arguments_sentence(fuzzed), hostile.argument_rows(fuzzed)
    assert sentence.startswith("3 examples (3 per tool): 0 crashes") and rows[0]["tool errors"] == 2
