"""How a step reads a result (JSON, text, structuredContent, a pattern's matches), links with arguments, what a walk
found to follow and what it says when it found nothing, without a server; and the `>>>` examples in the library's
docstrings, run as written."""

import doctest
import importlib
import json
from pathlib import Path

import pytest

from wismo.core import reading
from wismo.core.investigation import FollowUp, Investigation
from wismo.core.paths import REPO_ROOT
from wismo.core.reading import NoStructuredContent, Reading
from wismo.studies import following
from wismo.studies.evidence import evidence

LISTING = "[FILE] a.txt\n[DIR] sub\n[FILE] b.md\n"
NAMED = [{"kind": "FILE", "name": "a.txt"}, {"kind": "DIR", "name": "sub"}, {"kind": "FILE", "name": "b.md"}]
OPTIONAL = [{"id": "T-1", "note": None}, {"id": "T-2", "note": "late"}]


def call(name, arguments, output, is_error=False, structured=None):
    """One tool call as an investigation records it."""
    text = output if isinstance(output, str) else json.dumps(output)
    return {"name": name, "arguments": arguments, "output": text, "isError": is_error, "structured": structured}


def test_read_json_parses_the_text_or_keeps_it():
    assert Reading().value('{"a": [1, 2]}') == {"a": [1, 2]}
    assert Reading().value("There is no ticket T-0.") == "There is no ticket T-0."
    assert Reading().value("42") == 42  # JSON when it parses: a file holding "42" would be read as a number
    assert Reading("text").value("42") == "42"  # ... which read = "text" keeps as it is


def test_read_structured_takes_the_structured_content_and_names_what_lacks_it():
    assert Reading("structured").value("ignored text", {"content": "x"}) == {"content": "x"}
    with pytest.raises(NoStructuredContent):
        Reading("structured").value("text only")
    how = Investigation(entry="list_directory", reading=Reading("structured"), into="listing")
    with pytest.raises(NoStructuredContent) as raised:
        how.value_of(call("list_directory", {}, LISTING))
    assert (raised.value.step, raised.value.tool) == ("entry", "list_directory")
    named = raised.value.of("walk")
    assert str(named).startswith('design "walk": entry has read = "structured", but the result of list_directory')
    assert (named.design, named.step, named.tool) == ("walk", "entry", "list_directory")
    assert how.value_of(call("list_directory", {}, "Access denied", is_error=True)) is None  # an error: no value


@pytest.mark.parametrize(
    "pattern, text, found",
    [
        (r"^\[FILE\] (.+)$", LISTING, ["a.txt", "b.md"]),  # one group: its strings
        (
            r"^\[(?P<kind>FILE|DIR)\] (?P<name>.+)$",
            LISTING,
            [{"kind": "FILE", "name": "a.txt"}, {"kind": "DIR", "name": "sub"}, {"kind": "FILE", "name": "b.md"}],
        ),  # fmt: skip
        (r"^\[FILE\] .+$", LISTING, ["[FILE] a.txt", "[FILE] b.md"]),  # no group: the whole matches
        (r"^\[(\w+)\] (.+)$", "[FILE] a\n[DIR] b", [["FILE", "a"], ["DIR", "b"]]),  # several unnamed: a list each
        (
            r"^(?P<id>T-\d+)(?: \((?P<note>.+)\))?$",
            "T-1\nT-2 (late)",
            [{"id": "T-1", "note": None}, {"id": "T-2", "note": "late"}],
        ),  # fmt: skip
        (r"^nothing$", LISTING, []),
    ],
)
def test_a_pattern_gives_the_list_of_its_matches(pattern, text, found):
    assert Reading(pattern=pattern).value(text) == found


def test_a_pattern_that_does_not_compile_says_why():
    with pytest.raises(reading.PatternInvalid, match=r"'\(' does not compile as a regular expression \(missing \)"):
        reading.compiled("(")


def test_a_link_fills_its_arguments_with_the_case_and_the_value_followed():
    link = FollowUp("[].commit", "git_show", {"repo_path": "{repo}", "revision": "{item}"}, "shows")
    how = Investigation(entry="git_log", arguments={"repo_path": "{repo}"}, into="log", links=(link,))
    log = [{"commit": "a1"}, {"commit": None}, {"commit": "b2"}]
    assert how.linked_calls(log, {"repo": "r"}) == [
        ("git_show", {"repo_path": "r", "revision": "a1"}),  # a null is skipped
        ("git_show", {"repo_path": "r", "revision": "b2"}),
    ]
    assert link.item_arguments == ("revision",)
    inside = FollowUp("@", "read_text_file", {"path": "{dir}/{item}"}, "files")
    assert inside.call_arguments("a.txt", {"dir": "docs"}) == {"path": "docs/a.txt"}  # inside a longer template
    assert inside.item_arguments == ()  # none takes the value as it is


def test_a_text_walk_reads_each_step_as_declared():
    how = Investigation(
        entry="list_directory",
        arguments={"path": "{dir}"},
        reading=Reading(pattern=r"^\[FILE\] (.+)$"),
        into="names",
        links=(FollowUp("@", "read_text_file", {"path": "{dir}/{item}"}, "files", reading=Reading("text")),),
    )
    entry = call("list_directory", {"path": "d"}, LISTING)
    assert how.linked_calls(how.value_of(entry), {"dir": "d"}) == [
        ("read_text_file", {"path": "d/a.txt"}),
        ("read_text_file", {"path": "d/b.md"}),
    ]
    turns = [
        [entry],
        [
            call("read_text_file", {"path": "d/a.txt"}, "[1, 2]"),  # JSON-looking text, kept as text
            call("read_text_file", {"path": "d/b.md"}, "ENOENT", is_error=True),
        ],
    ]
    assert evidence(how, turns) == (
        {
            "names": ["a.txt", "b.md"],
            "files": ["[1, 2]", {"path": "d/b.md", "missing": True, "error": "ENOENT"}],  # the call's own arguments
        },
        None,
    )


def test_a_batch_link_over_an_empty_list_gives_an_empty_list():
    link = FollowUp.passing("relations[].from", "open_nodes", "names", "opened", batch=True)
    how = Investigation(entry="search_nodes", arguments={}, into="found", links=(link,))
    found = {"relations": []}
    assert how.linked_calls(found, {}) == []
    assert evidence(how, [[call("search_nodes", {}, found)]]) == ({"found": found, "opened": []}, None)
    scalar = FollowUp.passing("id", "get", "id", "record", batch=True)  # a path to one value that is absent: null
    assert evidence(Investigation("find", links=(scalar,), into="x"), [[call("find", {}, {})]]) == (
        {"x": {}, "record": None},
        None,
    )


def test_a_batch_link_passes_each_value_once_in_the_order_first_met():
    link = FollowUp.passing("[].name", "open_nodes", "names", "", batch=True)
    how = Investigation(entry="e", links=(link,), into="")
    assert how.linked_calls([{"name": "B"}, {"name": "A"}, {"name": "B"}], {}) == [
        ("open_nodes", {"names": ["B", "A"]})
    ]


def test_a_link_that_found_nothing_anywhere_is_said_with_the_entry_value_and_the_fix():
    how = Investigation(
        entry="list_directory",
        into="listing",
        links=(
            FollowUp.passing("files", "read_text_file", "path", "files"),
            FollowUp.passing("@", "read_text_file", "path", "all"),
        ),
    )
    said = following.unfollowed("walk", how, [LISTING, LISTING])
    assert [(x["link"], x["from"]) for x in said] == [(1, "files")]  # "@" follows the text itself
    sentence = said[0]["sentence"]
    assert sentence.startswith('design "walk": links[1] (from = "files", tool read_text_file) found nothing to follow')
    assert 'the entry\'s value was text of 35 characters, "[FILE] a.txt\\n[DIR] sub\\n[FILE] b.md\\n"' in sentence
    assert "pattern" in sentence and 'read = "structured"' in sentence
    assert following.unfollowed("walk", how, []) == []  # no entry succeeded: nothing to say about its links
    # In one case out of several is enough.
    assert following.unfollowed("walk", how, [LISTING, {"files": ["a"]}]) == []


@pytest.mark.parametrize(
    "value, said, fix",
    [
        ({"files": None, "listing": "x"}, "an object with the keys files, listing", 'such as "files"'),
        ([{"name": "a", "type": "file"}], "a list of 1 objects with the keys name, type", '"[].name"'),
        (["a", 2], "a list of 2 numbers and strings", '"@" for each element'),
        ("x" * 50, 'text of 50 characters, "' + "x" * 40 + '"…', "pattern"),
        (None, "null", "check what the server answers"),
    ],
)
def test_a_value_is_described_by_its_shape(value, said, fix):
    assert following.described(value) == said
    assert fix in following.fix(value)


def docstring_modules() -> list[str]:
    """Every library module whose docstrings carry a `>>>` example."""
    lib = REPO_ROOT / "lib"
    return sorted(
        ".".join(p.relative_to(lib).with_suffix("").parts)
        for p in Path(lib / "wismo").rglob("*.py")
        if ">>> " in p.read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("name", docstring_modules())
def test_the_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, name


def test_a_typed_pattern_makes_a_text_design_equal_a_json_one():
    from wismo.core import jsondiff
    from wismo.core.reading import Reading

    text = "107 | Dune | due 2026-12-10 | returned False\n108 | Emma | due 2026-12-24 | returned True"
    pattern = r"^(?P<id>\d+) \| (?P<title>.+?) \| due (?P<due>\S+) \| returned (?P<returned>\w+)$"
    as_json = [
        {"id": 107, "title": "Dune", "due": "2026-12-10", "returned": False},
        {"id": 108, "title": "Emma", "due": "2026-12-24", "returned": True},
    ]
    typed = Reading(pattern=pattern, types=(("id", "int"), ("returned", "bool"))).value(text)
    assert typed == as_json and jsondiff.differences(as_json, typed, ("json", "text")) == []
    # Untyped, every value is a string, and the text design never equals the JSON one.
    assert jsondiff.differences(as_json, Reading(pattern=pattern).value(text), ("json", "text"))
    # A Python literal, as mcp-server-sqlite's read_query answers, read as data, never run.
    literal = "[{'id': 107, 'title': 'Dune', 'due': '2026-12-10', 'returned': False}]"
    assert Reading("python").value(literal) == as_json[:1]
    assert Reading("python").value("__import__('os').remove('x')") == "__import__('os').remove('x')"
    assert Reading("python").declared == {"read": "python"}
    assert Reading(pattern=pattern, types=(("id", "int"),)).declared == {"pattern": pattern, "types": {"id": "int"}}


def test_a_studys_types_are_checked_against_its_pattern():
    from pathlib import Path

    from wismo.studies.designs import _reading
    from wismo.studies.problems import Problems

    def said(step):
        r = Problems(Path("s.toml"))
        return _reading(r, "design x", "entry", step), r.problems

    reading, problems = said({"pattern": r"(?P<id>\d+)", "types": {"id": "int"}})
    assert reading.types == (("id", "int"),) and problems == []
    assert "give it with a pattern" in said({"types": {"id": "int"}})[1][0]
    assert (
        "no named group of the pattern (it names id)" in said({"pattern": r"(?P<id>\d+)", "types": {"n": "int"}})[1][0]
    )
    # A type that is none of reading.TYPES is the schema's to say (studies/schema.py), in the key's own words.
    from wismo.studies import schema

    r = Problems(Path("s.toml"))
    entry = {"tool": "t", "pattern": r"(?P<id>\d+)", "types": {"id": "date"}}
    schema.check(r, {"title": "t", "question": "q", "designs": {"x": {"command": ["server"], "entry": entry}}})
    assert r.problems == [
        """design "x": entry.types must be a table of the pattern's named groups and their types ("str", "int", """
        """"float", "bool" or "json"), not {'id': 'date'}."""
    ]
    assert said(entry) == (said(entry)[0], [])  # and the reading itself says nothing more


def test_a_pattern_that_reads_nothing_is_said_and_one_that_never_reads_stops_the_run():
    from wismo.studies import following

    some = [("entry", "get_x", "a 1", True), ("entry", "get_x", "no match here", False), ("entry", "get_x", "", False)]
    (said,) = following.unread("mine", some)
    assert said["results"] == 1 and said["sentence"] == (
        'design "mine": entry (tool get_x) read nothing with its pattern from 1 of 2 results that had text, the first '
        '"no match here".'
    )
    assert following.unread("mine", [("entry", "get_x", "a 1", True)]) == []
    with pytest.raises(following.PatternReadsNothing, match=r'design "mine": links\[1\] \(tool get_y\) read nothing'):
        following.unread("mine", [("links[1]", "get_y", "x" * 100, False), ("links[1]", "get_y", "y", False)])


@pytest.mark.anyio
async def test_a_study_whose_pattern_never_reads_stops_before_any_verdict(tmp_path):
    from wismo.core.paths import REPO_ROOT
    from wismo.reports.analyses import comparison
    from wismo.studies import following

    article = (REPO_ROOT / "data" / "studies" / "where-is-my-order.toml").read_text(encoding="utf-8")
    cases = article[article.index("[[cases]]") : article.index("# Identifiers either design")]
    study = tmp_path / "pattern.toml"
    study.write_text(
        'title = "A pattern"\nquestion = "Where is {orderId}?"\nreference = "granular"\n'
        '[designs.granular]\nserve = "granular"\n'
        '[designs.focused]\ncommand = ["{python}", "-m", "wismo", "serve", "focused"]\n'
        'entry = { tool = "get_order_support_context", arguments = { orderId = "{orderId}" }, '
        "pattern = '^NOT THERE (.+)$' }\n" + cases,
        encoding="utf-8",
    )
    with pytest.raises(
        following.PatternReadsNothing, match=r'design "focused": entry \(tool get_order_support_context'
    ):
        await comparison.run(["ORD-1001", "ORD-1004"], study=str(study), unfriendly=False)


@pytest.mark.anyio
async def test_a_result_of_several_blocks_is_read_block_by_block_and_compares_with_one_json_block():
    from wismo.core.paths import REPO_ROOT
    from wismo.core.reading import Reading
    from wismo.reports.analyses import comparison
    from wismo.studies import declaration
    from wismo.studies.servers import reach

    path = REPO_ROOT / "tests" / "studies" / "blocks" / "blocks.toml"
    study = declaration.load(path)
    async with reach(study.designs["several"]) as conn:
        got = await conn.call("get_loans", {"memberId": "M-1"})
    # Two text blocks and an embedded text resource are read; the picture's 32 bytes are counted, never read.
    assert len(got.blocks) == 3 and got.binary == 32 and not got.is_error
    values = Reading().value(got.text, None, list(got.blocks))
    assert values == [
        {"loanId": "L-1", "title": "Dune"},
        {"loanId": "L-2", "title": "Emma"},
        {"memberId": "M-1", "note": "two loans"},
    ]
    assert Reading(block=1).value(got.text, None, list(got.blocks)) == {"loanId": "L-2", "title": "Emma"}
    assert Reading(block=7).value(got.text, None, list(got.blocks)) is None
    # Resource links are read in their places (resources/read, one interaction each) when the step says so.
    async with reach(study.designs["linked"]) as conn:
        unfollowed = await conn.call("get_loan_links", {"memberId": "M-1"})
        followed = await conn.call("get_loan_links", {"memberId": "M-1"}, follow_resources=True)
        methods = [i.method for i in conn.interactions]
    assert [json.loads(b) for b in unfollowed.blocks] == values[2:]  # unread links carry nothing
    assert [json.loads(b) for b in followed.blocks] == values
    assert methods[-3:] == ["tools/call", "resources/read", "resources/read"]
    assert followed.reads == 2 and unfollowed.reads == 0
    # A link the server will not read makes the step's result an error that says so; the server keeps serving.
    async with reach(study.designs["linked"]) as conn:
        refused = await conn.call("get_loan_links", {"memberId": "M-9"}, follow_resources=True)
        again = await conn.call("get_loan_links", {"memberId": "M-1"}, follow_resources=True)
    assert refused.is_error and refused.text.startswith("resources/read loan://L-99 was refused: ")
    assert refused.reads == 1 and not again.is_error  # the message after "refused: " is the server's own
    # Through the comparison, over real servers: the blocks' values and the followed links' equal the one JSON
    # block's, no traceback; the picture's bytes are counted in its design's.
    result = await comparison.run(study=str(path), unfriendly=False)
    assert result["summary"]["allEqual"], result["cases"][0]["differences"]
    case = result["cases"][0]
    assert case["several"]["bytes"] == len("\n".join(got.blocks).encode()) + 32
    assert case["linked"]["calls"] == 1 and case["linked"]["resourceReads"] == 2 and "resourceReads" not in case["one"]
