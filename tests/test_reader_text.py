"""The reader's version of every report, read as text: it never speaks of cells, says each thing once per section,
and its tables speak in words (no JSON keys but the tools' wire names, no nan, counts as integers)."""

import json
import re

import pytest

from reader_text import narrative, near_duplicates, page, sections, tables
from wismo.core.kinds import MEANINGS, PROVIDER

CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z]*\b")
# Names a tool or the protocol puts on the wire (MCP's isError, JSON Schema's keywords): a reader may meet them.
PROTOCOL = {"isError", "inputSchema", "oneOf", "anyOf", "allOf"}


def _readers(built):
    return {r.name: page(r.reader.read_text()) for r in built.rendered}


def _wire_names(built) -> set[str]:
    """Every camelCase word of the tools' own text as tools/list gave it (argument names, fields they describe)."""
    tools = json.loads((built.out / "deterministic-comparison.json").read_text())["tools"]
    return set(CAMEL.findall(json.dumps(tools))) | PROTOCOL


def test_readers_never_mention_the_cells_they_hide(built_reports):
    for name, soup in _readers(built_reports).items():
        found = re.findall(r".{0,40}\bcells?\b.{0,20}", narrative(soup), flags=re.IGNORECASE)
        assert not found, f"{name}: {found}"


def test_each_section_says_each_thing_once(built_reports):
    for name, soup in _readers(built_reports).items():
        for section, said in sections(soup).items():
            assert not near_duplicates(said, 0.7), f"{name}, {section!r}: {near_duplicates(said, 0.7)}"


def test_readers_tables_speak_in_words_and_counts_are_integers(built_reports):
    wire = _wire_names(built_reports)
    for name, soup in _readers(built_reports).items():
        for heads, rows in tables(soup):
            assert not [h for h in heads if CAMEL.search(h)], f"{name}: {heads}"
            for row in rows:
                for head, text in zip(heads, row):
                    outside_json = re.sub(r"\{.*\}|\w+\([^)]*\)", "", text)  # a call's arguments are wire text
                    assert set(CAMEL.findall(outside_json)) <= wire, f"{name}, {head}: {text[:80]}"
                    assert text.lower() not in ("nan", "none, nan"), f"{name}, {head}: nan"
                    if re.search(r"\((count|tokens|bytes|lines)\b", head):
                        assert not re.search(r"\d\.0\b", text), f"{name}, {head}: {text}"
                        assert not re.search(r"\d, \d", text), f"{name}, {head}: a list of numbers joined by commas"


@pytest.mark.parametrize(
    ("name", "version", "said"),
    [
        # 02 section 6: caching starts at 100 lines for granular only with parallel calls; say the sequential case.
        ("02-context-cost", "reader", "with one tool call per request (sequential calls), at granular 10 lines"),
        # 04: what exceeds the window is a model request (the whole history), not a tool call.
        ("04-scale", "reader", "first order size at which one model request exceeds the 128,000-token window"),
        (
            "04-scale",
            "reader",
            "a scoped session's model request is over the window, although its largest tool result is 2,000",
        ),
        # 02's introduction defines provider-reported as the index does, from the one definition.
        ("02-context-cost", "reader", f"provider-reported , {MEANINGS[PROVIDER]}"),
        # 01: annotations in words (its tools table is in the full version).
        ("01-equivalence", "full", "read-only, closed-world"),
    ],
)
def test_the_ambiguous_sentences_say_what_their_figures_show(built_reports, name, version, said):
    rendered = next(r for r in built_reports.rendered if r.name == name)
    soup = page((rendered.reader if version == "reader" else rendered.html).read_text())
    text = re.sub(r"\s+", " ", soup.get_text(" ", strip=True))
    assert said in text


def test_lists_of_numbers_in_sentences_cannot_be_misread(built_reports):
    # "549, 678, 1,032" reads as four numbers: a list is joined by a middle dot.
    for name, soup in _readers(built_reports).items():
        found = re.findall(r".{0,30}\d, \d{1,3},\d{3}.{0,10}", narrative(soup))
        assert not found, f"{name}: {found}"
