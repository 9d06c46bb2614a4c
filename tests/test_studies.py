"""Studies: a study file read and checked (every problem one sentence, all gathered at once), the article's study
as the built-in reports' cases, the templates, the JSON containment and the evidence an investigation establishes,
`wismo study check` and `wismo study run` over the helpdesk's two tiny servers (tests/studies/helpdesk), and the
memory study over the MCP reference memory server, installed as `make peers` installs it.

Everything that talks to a server talks to a real one over stdio. `wismo study run` executes two notebooks, so it
runs twice in this file (the helpdesk as it is, and with a planted fault), both at once in one module-scoped
fixture; the `wismo study check` runs are likewise started together in one."""

import hashlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

import peers
from commands import TIMEOUT_S, Done, finished, listing, one_sentence, wismo, wismo_argv
from wismo.core import jsondiff, pairing, processes, templates
from wismo.core.investigation import Cursor, FollowUp, Investigation
from wismo.core.jsondiff import ABSENT
from wismo.core.paths import ARTICLE_STUDY, OUTPUTS, REPO_ROOT
from wismo.domain import prompts
from wismo.mcp.servers import designs as registry
from wismo.studies import declaration, matching, servers
from wismo.studies.declaration import StudyInvalid
from wismo.studies.evidence import MISSING, evidence

HELPDESK = REPO_ROOT / "tests" / "studies" / "helpdesk"
HELPDESK_TOML = HELPDESK / "helpdesk.toml"
MEMORY_TOML = REPO_ROOT / "data" / "studies" / "memory-graph.toml"
MEMORY_GRAPH = REPO_ROOT / "data" / "studies" / "memory-graph.jsonl"
FAULTY = "escalated, three comments"  # the helpdesk case the planted fault changes


# ---------------------------------------------------------------------------------------------------------------
# 1. The declaration, read and checked without any server.

TOP = 'title = "Helpdesk"\nquestion = "What is the state of ticket {ticketId}?"\n'
GRANULAR = """command = ["{python}", "helpdesk.py", "granular"]
entry = { tool = "get_ticket", arguments = { ticketId = "{ticketId}" }, into = "ticket" }
links = [{ from = "customerId", tool = "get_customer", argument = "customerId", into = "customer" }]
"""
FOCUSED = """command = ["{python}", "helpdesk.py", "focused"]
entry = { tool = "get_ticket_context", arguments = { ticketId = "{ticketId}" } }
"""
CASES = '[[cases]]\nlabel = "escalated"\nticketId = "T-1001"\n'


def study_file(folder: Path, top=TOP, granular=GRANULAR, focused=FOCUSED, cases=CASES, name="study.toml") -> Path:
    """A study file in `folder`: the top-level keys, the two helpdesk designs (None leaves one out) and the cases."""
    parts = [top]
    if granular is not None:
        parts.append(f"[designs.granular]\n{granular}")
    if focused is not None:
        parts.append(f"[designs.focused]\n{focused}")
    parts.append(cases)
    path = folder / name
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(StudyInvalid) as raised:
        declaration.load(path)
    assert raised.value.path == path
    assert all(one_sentence(p) for p in raised.value.problems), raised.value.problems
    return raised.value.problems


def test_python_in_a_command_is_the_interpreter_wismo_python_names_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv(processes.INTERPRETER_ENV, "/opt/other/python")
    assert declaration.load(study_file(tmp_path)).designs["focused"].address.command[0] == "/opt/other/python"


def test_a_valid_declaration_loads_as_declared(tmp_path, real_servers):
    study = declaration.load(study_file(tmp_path))
    assert (study.title, study.reference, study.match, study.key) == ("Helpdesk", "granular", "equal", "ticketId")
    assert list(study.designs) == ["granular", "focused"]
    granular = study.designs["granular"]
    assert granular.address.command == (
        sys.executable,
        "helpdesk.py",
        "granular",
    )  # {python}: the interpreter wismo runs on
    assert granular.address.cwd == str(tmp_path) and granular.address.fixed_transport == "stdio"
    how = granular.investigation
    assert (how.entry, how.into, how.arguments) == ("get_ticket", "ticket", {"ticketId": "{ticketId}"})
    assert how.links == (FollowUp("customerId", "get_customer", {"customerId": "{item}"}, "customer"),)
    assert how.links == (FollowUp.passing("customerId", "get_customer", "customerId", "customer"),)
    assert study.designs["focused"].investigation.into == ""  # no `into`: the linked results merge into the entry's
    (case,) = study.cases
    assert (case.label, case.fields, case.unfriendly) == ("escalated", {"ticketId": "T-1001"}, False)
    assert study.question_for(case) == "What is the state of ticket T-1001?"


WITHOUT_TITLE = 'question = "What is the state of ticket {ticketId}?"\n'
WITHOUT_QUESTION = 'title = "Helpdesk"\n'
LINK_WITHOUT_FROM = GRANULAR.replace('from = "customerId", ', "")
NOT_A_FIELD = FOCUSED.replace('"{ticketId}"', '"{ticket}"')
INVALID = {
    # id: (what the file gives, where the problem is, what its sentence must say)
    "no title": (dict(top=WITHOUT_TITLE), "top level", ["title is missing"]),
    "no question": (dict(top=WITHOUT_QUESTION), "top level", ["question is missing"]),
    "no designs": (dict(granular=None, focused=None), "top level", ["designs is missing", "[designs.NAME]"]),
    "no cases": (dict(top=TOP + 'key = "ticketId"\n', cases=""), "top level", ["cases is missing", "[[cases]]"]),
    "unknown top-level key": (dict(top=TOP + 'colour = "blue"\n'), "top level", ['unknown key "colour"', "title"]),
    "command and url": (
        dict(granular=GRANULAR + 'url = "http://127.0.0.1:9/mcp"\n'),
        'design "granular"',
        ["exactly one of serve", "it gives command and url"],
    ),
    "neither command nor url": (
        dict(focused=FOCUSED.split("\n", 1)[1]),
        'design "focused"',
        ["exactly one of serve", "command", "url"],
    ),
    "unknown design key": (dict(focused=FOCUSED + "timeout = 5\n"), 'design "focused"', ['unknown key "timeout"']),
    "serve not served": (
        dict(focused='serve = "helpdesk"\n'),
        'design "focused"',
        ['serve names "helpdesk"', "wismo does not serve", ", ".join(registry.names())],
    ),
    "link without from": (dict(granular=LINK_WITHOUT_FROM), 'design "granular" links[1]', ["from is missing"]),
    "entry.arguments not a field": (
        dict(focused=NOT_A_FIELD),
        'design "focused"',
        ["entry.arguments", "{ticket}", "no case has"],
    ),
    "question not a field": (
        dict(top=TOP.replace("{ticketId}", "{ticket}")),
        "top level",
        ["question", "{ticket}", "no case has"],
    ),
    "match": (
        dict(top=TOP + 'match = "subset"\n'),
        "top level",
        ['match must be "equal", "contains" or "text", not \'subset\''],
    ),
    "pattern that does not compile": (
        dict(focused=FOCUSED.replace('"{ticketId}" } }', '"{ticketId}" }, pattern = "^(T-[0-9]+" }')),
        'design "focused"',
        ["entry.pattern", "'^(T-[0-9]+' does not compile as a regular expression", "missing ), unterminated"],
    ),
    "from that does not parse": (
        dict(granular=GRANULAR.replace('from = "customerId"', 'from = "customer["')),
        'design "granular"',
        ["links[1].from", "'customer[' is not a JMESPath expression"],
    ),
    "link template naming a field no case has": (
        dict(
            granular=GRANULAR.replace('argument = "customerId"', 'arguments = { customerId = "{item}", at = "{when}" }')
        ),
        'design "granular"',
        ["links[1].arguments names {when}, which no case has"],
    ),
    "{item} in the entry": (
        dict(focused=FOCUSED.replace('"{ticketId}" } }', '"{item}" } }')),
        'design "focused"',
        ["entry.arguments names {item}, which only a link's arguments take"],
    ),
    "{item} in the question": (
        dict(top=TOP.replace("{ticketId}", "{ticketId} {item}")),
        "top level",
        ["question names {item}, which only a link's arguments take"],
    ),
    "argument and arguments": (
        dict(
            granular=GRANULAR.replace(
                'argument = "customerId"', 'argument = "customerId", arguments = { a = "{item}" }'
            )
        ),
        'design "granular"',
        ["links[1] gives both argument and arguments"],
    ),
    "neither argument nor arguments": (
        dict(granular=GRANULAR.replace('argument = "customerId", ', "")),
        'design "granular"',
        ["links[1] gives neither argument nor arguments"],
    ),
    "arguments without {item}": (
        dict(granular=GRANULAR.replace('argument = "customerId"', 'arguments = { customerId = "{ticketId}" }')),
        'design "granular"',
        ["links[1].arguments never names {item}"],
    ),
    "read not a reading": (
        dict(focused=FOCUSED.replace('"{ticketId}" } }', '"{ticketId}" }, read = "xml" }')),
        'design "focused"',
        ['entry.read must be "json", "text", "structured" or "python", not \'xml\''],
    ),
    "read and pattern": (
        dict(focused=FOCUSED.replace('"{ticketId}" } }', '"{ticketId}" }, read = "text", pattern = "x" }')),
        'design "focused"',
        ["entry gives both read and pattern"],
    ),
    "a case field named item": (
        dict(cases=CASES + "item = 3\n"),
        "cases[1]",
        ["a case cannot have a field named item"],
    ),
    "a link's into without the entry's": (
        dict(granular=GRANULAR.replace(', into = "ticket" }', " }")),
        'design "granular"',
        ['links[1].into is "customer" but entry has no into'],
    ),
    "reference not a design": (
        dict(top=TOP + 'reference = "scoped"\n'),
        "top level",
        ['reference names "scoped"', "not a design", "granular, focused"],
    ),
    "duplicate labels": (dict(cases=CASES + CASES), "top level", ['label "escalated"', "two cases", "unique"]),
    # Said by the schema (studies/schema.py), each in its key's own words, naming the key's whole value.
    "env not strings": (
        dict(focused=FOCUSED + "env = { DEBUG = 1 }\n"),
        'design "focused"',
        ["env must be a table of strings, not {'DEBUG': 1}"],
    ),
    "an empty command word": (
        dict(focused=FOCUSED.replace('"{python}", ', '"", ')),
        'design "focused"',
        ["command must be a non-empty list of strings", "not ['', 'helpdesk.py', 'focused']"],
    ),
    "a negative block": (
        dict(focused=FOCUSED.replace('"{ticketId}" } }', '"{ticketId}" }, block = -1 }')),
        'design "focused"',
        ["entry.block picks one of a result's blocks by its place, from 0: a whole number, not -1"],
    ),
    "a type that is none": (
        dict(
            focused=FOCUSED.replace(
                '"{ticketId}" } }', '"{ticketId}" }, pattern = "(?P<n>.)", types = { n = "date" } }'
            )
        ),
        'design "focused"',
        ["entry.types must be a table of the pattern's named groups", "not {'n': 'date'}"],
    ),
    "a link's arguments empty": (
        dict(granular=GRANULAR.replace('argument = "customerId"', "arguments = {}")),
        'design "granular"',
        ["links[1].arguments must be a table of argument names and templates, not {}"],
    ),
    "an unknown key in a link": (
        dict(granular=GRANULAR.replace('into = "customer" }', 'into = "customer", timeout = 5 }')),
        'design "granular" links[1]',
        ['unknown key "timeout"', "from, tool, argument"],
    ),
    "a case label not a string": (
        dict(cases=CASES.replace('"escalated"', "7")),
        "cases[1]",
        ["label must be a non-empty string, not 7"],
    ),
    "label of a case and of an unfriendly input": (
        dict(cases=CASES + CASES.replace("[[cases]]", "[[unfriendly]]")),
        "top level",
        ['label "escalated"', "two cases"],
    ),
}


@pytest.mark.parametrize("given, where, said", INVALID.values(), ids=INVALID.keys())
def test_each_problem_is_one_sentence_naming_where_and_the_key(tmp_path, given, where, said):
    problems = problems_of(study_file(tmp_path, **given))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{where}: "), problems
    assert all(s in problems[0] for s in said), problems


def test_a_field_that_some_cases_lack_names_the_first_case_lacking_it(tmp_path):
    lacking = '[[unfriendly]]\nlabel = "no ticket"\ncustomerId = "C-1"\n'
    problems = problems_of(study_file(tmp_path, cases=CASES + lacking))
    assert problems == [
        "top level: question names {ticketId}, which case 'no ticket' lacks.",
        "design \"granular\": entry.arguments names {ticketId}, which case 'no ticket' lacks.",
        "design \"focused\": entry.arguments names {ticketId}, which case 'no ticket' lacks.",
    ]


def test_every_problem_of_a_file_is_gathered_at_once(tmp_path):
    path = study_file(
        tmp_path,
        top=TOP + 'colour = "blue"\nmatch = "subset"\n',
        granular=LINK_WITHOUT_FROM + 'url = "http://127.0.0.1:9/mcp"\n',
        focused='serve = "helpdesk"\n',
        cases=CASES + CASES,
    )
    problems = problems_of(path)
    expected = [
        ("top level", 'unknown key "colour"'),
        ('design "granular"', "it gives command and url"),
        ('design "granular" links[1]', "from is missing"),
        ('design "focused"', 'serve names "helpdesk"'),
        ("top level", "match must be"),
        ("top level", 'label "escalated"'),
    ]
    assert len(problems) == len(expected), problems
    for where, said in expected:
        assert any(p.startswith(f"{where}: ") and said in p for p in problems), (where, said, problems)
    with pytest.raises(StudyInvalid) as raised:
        declaration.load(path)
    assert str(raised.value) == f"{path}: " + " ".join(problems)


def test_an_empty_file_names_every_required_key(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")
    problems = problems_of(path)
    for key in ("title", "question", "cases", "designs"):
        assert any(p.startswith(f"top level: {key} is missing") for p in problems), (key, problems)


def test_invalid_toml_is_one_problem_with_where_it_breaks(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text(TOP + "[designs.granular\n", encoding="utf-8")
    (problem,) = problems_of(path)
    assert problem.startswith("is not valid TOML: ") and "line 3" in problem, problem


def test_a_missing_file_is_one_problem(tmp_path):
    path = tmp_path / "nowhere.toml"
    assert problems_of(path) == ["no such file."]
    with pytest.raises(StudyInvalid, match=re.escape(f"{path}: no such file.")):
        declaration.load(path)


def test_a_study_never_writes_into_the_built_in_outputs():
    from wismo.reports.study_run import StudyRefused, out_folder

    before = listing(OUTPUTS)
    for given in (OUTPUTS, OUTPUTS / "studies" / ".."):
        with pytest.raises(StudyRefused, match="holds the built-in reports"):
            out_folder(declaration.load(HELPDESK_TOML), given)
    assert listing(OUTPUTS) == before


# ---------------------------------------------------------------------------------------------------------------
# 2. The article's study: the built-in reports' cases and question.

# The comparison's cases as data/fixtures/cases.json held them before the study file replaced it.
ARTICLE_ORDERS = [
    ("delivered on time", "ORD-1001"),
    ("carrier delay", "ORD-1002"),
    ("payment not captured", "ORD-1003"),
    ("partial delivery", "ORD-1004"),
    ("tracking unavailable", "ORD-1005"),
    ("status lag", "ORD-1006"),
]
ARTICLE_UNFRIENDLY = [
    ("empty", ""),
    ("wrong prefix", "PAY-1004"),
    ("wrong shape", "ORD-12"),
    ("lower case", "ord-1004"),
    ("trailing space", "ORD-1004 "),
    ("very long", "ORD-" + "9" * 5000),
    ("control character", "ORD-10\u00004"),
    ("path-like", "../../etc/passwd"),
    ("JSON-like", '{"orderId":"ORD-1004"}'),
    ("well formed, no record", "ORD-9999"),
    ("linked records missing", "ORD-1007"),
]


def test_the_article_study_gives_the_built_in_reports_cases():
    study = declaration.article()
    assert study.path == ARTICLE_STUDY and all(study.meets(need) for need in ("published", "case-study", "served"))
    assert declaration.chosen(None) == study and declaration.chosen("") == study
    assert (study.reference, study.match, study.key) == ("granular", "equal", "orderId")
    assert [(c.label, c.fields, c.unfriendly) for c in study.cases] == [
        (label, {"orderId": order}, False) for label, order in ARTICLE_ORDERS
    ]
    assert [(c.label, c.fields, c.unfriendly) for c in study.unfriendly] == [
        (label, {"orderId": order}, True) for label, order in ARTICLE_UNFRIENDLY
    ]
    fields = {c.label: c.value("orderId") for c in study.unfriendly}
    assert fields["very long"] == "ORD-" + "9" * 5000 and len(fields["very long"]) == 5004
    assert fields["control character"] == "ORD-10\x004"  # the NUL kept, not dropped or escaped
    assert [study.case_key(c) for c in study.select(None, unfriendly=False)] == [o for _, o in ARTICLE_ORDERS]
    expectations = json.loads((REPO_ROOT / "data" / "fixtures" / "expectations.json").read_text(encoding="utf-8"))
    assert list(expectations["cases"]) == [o for _, o in ARTICLE_ORDERS]  # the six with hand-written answers
    for name in ("granular", "focused"):
        design = study.designs[name]
        assert design.address.serve == name and design.investigation == registry.get(name).investigation


def test_the_article_study_asks_the_article_question_with_wismo_instructions():
    study = declaration.article()
    for case in study.cases + study.unfriendly:
        assert study.question_for(case) == prompts.question(case.value("orderId")), case.label
    assert study.instructions == prompts.INSTRUCTIONS


# ---------------------------------------------------------------------------------------------------------------
# 3. Templates, containment and evidence.


def test_fill_keeps_a_whole_field_as_its_value_and_writes_it_as_text_inside_a_sentence():
    values = {"ids": ["A", "B"], "n": 5, "name": "Farid"}
    template = {"names": "{ids}", "count": "{n}", "about": "{name} has {n} notes on {ids}", "keep": [3, "{name}"]}
    assert templates.fill(template, values) == {
        "names": ["A", "B"],
        "count": 5,
        "about": 'Farid has 5 notes on ["A", "B"]',
        "keep": [3, "Farid"],
    }
    assert templates.fields_named({"a": ["{x} and {y}", {"b": "{z}"}], "c": 3, "d": "{not a field}"}) == {"x", "y", "z"}
    with pytest.raises(KeyError, match="absent"):
        templates.fill("{absent}", values)


def test_read_is_jmespath():
    record = {
        "ticket": {"customer": {"id": "C-1"}},
        "relations": [{"from": "A", "to": "B"}, {"from": "C"}, {"from": "D", "to": "A"}],
        "entries": [{"name": "a.txt", "type": "file"}, {"name": "sub", "type": "directory"}],
    }
    assert templates.read(record, "ticket.customer.id") == "C-1"
    assert templates.read(record, "relations[].to") == ["B", "A"]  # a projection leaves out what it does not find
    assert templates.read(record, "relations.to") is None  # a list is not an object: JMESPath needs the []
    assert templates.read(record, "entries[?type=='file'].name") == ["a.txt"]  # a filter
    assert templates.read(record["entries"], "@") == record["entries"] and templates.read("text", "@") == "text"
    assert templates.read(record, "ticket.nothing.id") is None
    assert templates.read(record, "length(ticket)") == 1 and templates.read(3, "length(@)") is None  # wrong type
    with pytest.raises(templates.ExpressionInvalid, match="'relations\\[' is not a JMESPath expression"):
        templates.read(record, "relations[")


def test_missing_from_is_match_contains():
    reference = {"entities": [{"name": "A"}, {"name": "B"}], "count": 2}
    assert jsondiff.missing_from(reference, reference) == []
    more = {"entities": [{"name": "C"}, {"name": "B"}, {"name": "A"}], "count": 2, "relations": []}
    assert jsondiff.missing_from(reference, more) == []  # any order, among more, with more keys
    assert jsondiff.missing_from(reference, {"entities": [{"name": "B"}], "count": 2}, ("search", "graph")) == [
        {"path": "entities[0]", "search": {"name": "A"}, "graph": ABSENT}
    ]
    assert jsondiff.missing_from(reference, {"entities": reference["entities"]}) == [
        {"path": "count", "a": 2, "b": ABSENT}
    ]
    assert jsondiff.missing_from({"count": 2}, {"count": 2.0}) == [{"path": "count", "a": 2, "b": 2.0}]
    # Recursive: an element of a list is held by an element that holds it, extra fields and all (a job record
    # with one field more than the reference's holds it), at any depth.
    assert jsondiff.missing_from([{"name": "A"}], [{"name": "A", "type": "person"}]) == []
    deep = {"jobs": [{"id": 1, "steps": [{"n": "build"}, {"n": "test"}]}]}
    held = {"jobs": [{"id": 2}, {"id": 1, "owner": "x", "steps": [{"n": "test", "t": 3}, {"n": "build"}]}]}
    assert jsondiff.missing_from(deep, held) == [] and jsondiff.holds(held, deep)
    # An element no element holds is named by its index, as absent from the other.
    assert jsondiff.missing_from([{"id": 1, "state": "ok"}], [{"id": 1, "state": "failed"}]) == [
        {"path": "[0]", "a": {"id": 1, "state": "ok"}, "b": ABSENT}
    ]
    assert jsondiff.missing_from([1, [2, 3]], [[3, 2, 4], 1]) == []  # lists in lists, any order
    assert jsondiff.missing_from(more, reference) != []  # containment is not symmetric
    assert not jsondiff.holds([True], [1]) and not jsondiff.holds({"a": None}, {"a": 0})  # types differ


def test_text_missing_is_match_text():
    walk = {"names": ["a.txt", "b.md"], "files": ["one\ntwo\n", "Beta: b\n"], "size": 12, "ok": True, "x": None}
    bulk = "handbook/a.txt:\none\ntwo\n\n\n---\nhandbook/b.md:\nBeta: b\n size 12"
    assert jsondiff.text_missing(walk, bulk) == []  # every string leaf and number occurs within the text
    assert jsondiff.text_missing(walk, {"deep": [{"t": bulk}]}) == []  # within any string leaf of the other
    assert jsondiff.text_missing(walk, {"t": bulk.replace("Beta: b", "")}, ("walk", "bulk")) == [
        {"path": "files[1]", "walk": "Beta: b\n", "bulk": jsondiff.NOT_FOUND}  # only the first leaf not found
    ]
    assert jsondiff.text_missing({"n": 12}, {"n": 12}) == []  # the other's numbers count as their JSON text too
    assert jsondiff.text_missing({"n": 1.5}, "1.50") == []  # numbers as their JSON text: "1.5" occurs in "1.50"
    # Keys, booleans and null are not leaves: nothing is required of them.
    assert jsondiff.text_leaves({"key": {"k2": [True, None, 3, "s"]}}) == [("key.k2[2]", "3"), ("key.k2[3]", "s")]
    assert jsondiff.text_missing("needle", "hay\x00needle") == []  # a leaf holding the separator is still found
    assert jsondiff.text_missing("a\x00b", ["a", "b"]) == [{"path": "<root>", "a": "a\x00b", "b": jsondiff.NOT_FOUND}]


LOANS = [
    {"loanId": "L-11", "title": "The Left Hand of Darkness", "due": "2026-12-09", "renewals": 1},
    {"loanId": "L-12", "title": "A Pattern Language", "due": "2026-12-02", "renewals": 2},
]
ACCOUNT = {"member": {"memberId": "M-1", "loanIds": ["L-11", "L-12"]}, "loans": LOANS}


def swapped(field):
    """The account's loans with `field` exchanged between them."""
    a, b = (dict(x) for x in LOANS)
    a[field], b[field] = b[field], a[field]
    return [a, b]


def test_match_text_keeps_each_record_together():
    nested = {"memberId": "M-1", "loans": [dict(x) for x in LOANS]}
    lines = "Member M-1\n" + "\n".join(
        f"{x['loanId']} {x['title']}, due {x['due']}, renewed {x['renewals']}" for x in LOANS
    )
    markdown = "# M-1\n\n" + "\n\n".join(
        f"## {x['loanId']}\n{x['title']}\nDue: {x['due']}\nRenewals: {x['renewals']}" for x in LOANS
    )
    for held in (nested, lines, [markdown], {"t": lines}):
        assert pairing.text_held(ACCOUNT, held) == [], held
    # Two loans' due dates exchanged: every text still occurs, but not with its record (JSON and text alike).
    apart = {"path": "loans[0].due", "a": "2026-12-09", "b": pairing.NOT_TOGETHER, "record": "loans[0]"}
    assert pairing.text_held(ACCOUNT, {"memberId": "M-1", "loans": swapped("due")}) == [apart]
    text = "\n".join(f"{x['loanId']} {x['title']}, due {x['due']}, renewed {x['renewals']}" for x in swapped("due"))
    assert pairing.text_held(ACCOUNT, "M-1 " + text) == [apart]
    # A one-digit count exchanged is found too: the 1 of M-1 or L-11 is not a 1.
    text = "\n".join(
        f"{x['loanId']} {x['title']}, due {x['due']}, renewed {x['renewals']}" for x in swapped("renewals")
    )
    assert pairing.text_held(ACCOUNT, "M-1 " + text)[0]["path"] == "loans[0].renewals"
    # Equal evidence is always held, however its records resemble each other: 1 is not in 11, nor L-1 in L-11, and a
    # record repeated whole tells nothing apart; a value shared by a hundred lines is still found beside its own.
    many = [{"id": i, "status": "open"} for i in range(1, 13)]
    assert (
        pairing.text_held(many, many) == []
        and pairing.text_held([{"a": "x", "b": "y"}] * 2, [{"a": "x", "b": "y"}] * 2) == []
    )
    lines = [{"loanId": f"L-{i}", "status": "open", "due": f"2026-12-{i % 28 + 1:02d}"} for i in range(1, 101)]
    assert pairing.text_held(lines, "\n".join(f"{x['loanId']} {x['status']} due {x['due']}" for x in lines)) == []
    # A record alone of its kind (the member) is held wherever its texts are: nothing else could be taken for it.
    assert pairing.unpaired({"member": {"memberId": "M-1", "name": "Ines"}}, ["M-1", "Ines"]) == []
    assert pairing.records(ACCOUNT) == [("member", ACCOUNT["member"]), ("loans[0]", LOANS[0]), ("loans[1]", LOANS[1])]
    said = matching.said(
        {"path": "loans[0].due", "g": "2026-12-09", "f": pairing.NOT_TOGETHER, "record": "loans[0]"}, "g"
    )
    assert (
        said
        == 'at loans[0].due, g has "2026-12-09", which f gives, but not together with the rest of its record loans[0]'
    )


def call(name, arguments, output, is_error=False):
    """One tool call as an investigation records it."""
    text = output if isinstance(output, str) else json.dumps(output)
    return {"name": name, "arguments": arguments, "output": text, "isError": is_error, "structured": None}


HELPDESK_HOW = Investigation(
    entry="get_ticket",
    arguments={"ticketId": "{ticketId}"},
    into="ticket",
    links=(
        FollowUp.passing("customerId", "get_customer", "customerId", "customer"),
        FollowUp.passing("commentIds", "get_comment", "commentId", "comments"),
    ),
)
TICKET = {"ticketId": "T-1001", "customerId": "C-1", "commentIds": ["M-1", "M-2"]}


def test_evidence_keeps_each_link_where_into_says():
    turns = [
        [call("get_ticket", {"ticketId": "T-1001"}, TICKET)],
        [
            call("get_customer", {"customerId": "C-1"}, {"customerId": "C-1", "plan": "enterprise"}),
            call("get_comment", {"commentId": "M-1"}, {"commentId": "M-1", "text": "Down again"}),
            call("get_comment", {"commentId": "M-2"}, {"commentId": "M-2", "text": "Looking"}),
        ],
    ]
    assert evidence(HELPDESK_HOW, turns) == (
        {
            "ticket": TICKET,
            "customer": {"customerId": "C-1", "plan": "enterprise"},  # one identifier: one record
            "comments": [{"commentId": "M-1", "text": "Down again"}, {"commentId": "M-2", "text": "Looking"}],
        },
        None,
    )
    empty = {**TICKET, "customerId": None, "commentIds": []}
    assert evidence(HELPDESK_HOW, [[call("get_ticket", {}, empty)]]) == (
        {"ticket": empty, "customer": None, "comments": []},
        None,
    )
    assert evidence(HELPDESK_HOW, [[call("get_ticket", {}, "There is no ticket T-0000.", True)]]) == (
        None,
        "There is no ticket T-0000.",
    )


def test_a_failed_linked_call_is_kept_as_a_missing_record():
    turns = [
        [call("get_ticket", {"ticketId": "T-1001"}, TICKET)],
        [
            call("get_customer", {"customerId": "C-1"}, "There is no customer C-1.", True),
            call("get_comment", {"commentId": "M-1"}, {"commentId": "M-1", "text": "Down again"}),
            call("get_comment", {"commentId": "M-2"}, "There is no comment M-2.", True),
        ],
    ]
    found, error = evidence(HELPDESK_HOW, turns)
    assert error is None
    assert found["customer"] == {"customerId": "C-1", "missing": True, "error": "There is no customer C-1."}
    assert found["comments"] == [
        {"commentId": "M-1", "text": "Down again"},
        {"commentId": "M-2", "missing": True, "error": "There is no comment M-2."},
    ]
    # A call that was never made (the turn is short) is marked too, never dropped.
    found, _ = evidence(HELPDESK_HOW, turns[:1] + [turns[1][:2]])
    assert found["comments"][1] == {"commentId": "M-2", "missing": True, "error": "no call was made for it"}


MEMORY_HOW = Investigation(
    entry="search_nodes",
    arguments={"query": "{query}"},
    into="",
    links=(
        FollowUp.passing("relations[].from", "open_nodes", "names", "", batch=True),
        FollowUp.passing("relations[].to", "open_nodes", "names", "", batch=True),
    ),
)
SEARCH = {
    "entities": [{"name": "Farid"}],
    "relations": [{"from": "Farid", "to": "Go"}, {"from": "Alice", "to": "Farid"}],
}


def test_merged_evidence_with_batch_links():
    assert MEMORY_HOW.linked_calls(SEARCH, {"query": "Farid"}) == [
        ("open_nodes", {"names": ["Farid", "Alice"]}),
        ("open_nodes", {"names": ["Go", "Farid"]}),
    ]
    opened_from = {
        "entities": [{"name": "Farid"}, {"name": "Alice"}],
        "relations": [{"from": "Alice", "to": "Farid"}],
    }
    opened_to = {"entities": [{"name": "Go"}, {"name": "Farid"}], "relations": [{"from": "Farid", "to": "Go"}]}
    turns = [
        [call("search_nodes", {"query": "Farid"}, SEARCH)],
        [call("open_nodes", {"names": ["Farid", "Alice"]}, opened_from), call("open_nodes", {}, opened_to)],
    ]
    assert evidence(MEMORY_HOW, turns) == (
        {
            "entities": [{"name": "Farid"}, {"name": "Alice"}, {"name": "Go"}],  # merged, none repeated
            "relations": SEARCH["relations"],
        },
        None,
    )
    failed = [turns[0], [turns[1][0], call("open_nodes", {"names": ["Go", "Farid"]}, "Unknown node Go.", True)]]
    found, _ = evidence(MEMORY_HOW, failed)
    assert found[MISSING] == [{"names": ["Go", "Farid"], "missing": True, "error": "Unknown node Go."}]
    assert found["entities"] == [{"name": "Farid"}, {"name": "Alice"}]


def test_pages_are_merged_without_their_cursor():
    how = Investigation(entry="list_comments", arguments={"ticketId": "{ticketId}"}, into="", cursor=Cursor())
    pages = [
        {"ticketId": "T-1001", "comments": [{"id": 1}, {"id": 2}], "page": {"next": "c2"}},
        {"ticketId": "T-1001", "comments": [{"id": 3}], "page": {"next": "c3"}},
        {"ticketId": "T-1001", "comments": [], "page": {"next": None}},
    ]
    assert how.next_page(pages[0], {"ticketId": "T-1001"}) == {"ticketId": "T-1001", "cursor": "c2"}
    assert how.next_page(pages[2], {"ticketId": "T-1001"}) is None
    turns = [[call("list_comments", {}, page)] for page in pages]
    assert evidence(how, turns) == ({"ticketId": "T-1001", "comments": [{"id": 1}, {"id": 2}, {"id": 3}]}, None)


# ---------------------------------------------------------------------------------------------------------------
# 4. `wismo study check` over the helpdesk's servers.


def helpdesk_copy(folder: Path, *edits: tuple[str, str]) -> Path:
    """The helpdesk study copied into `folder` (its server beside it), with each (old, new) edit made once."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(HELPDESK / "helpdesk.py", folder / "helpdesk.py")
    text = HELPDESK_TOML.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, f"the helpdesk study no longer has {old!r} once"
        text = text.replace(old, new)
    path = folder / "helpdesk.toml"
    path.write_text(text, encoding="utf-8")
    return path


GRANULAR_COMMAND = 'command = ["{python}", "helpdesk.py", "granular"]'
FOCUSED_COMMAND = 'command = ["{python}", "helpdesk.py", "focused"]'
NO_SUCH_SERVER = "/nonexistent/bin/helpdesk-server"


@dataclass
class Started:
    processes: dict[str, subprocess.Popen]
    ok_out: Path
    fault_out: Path
    before: dict


@pytest.fixture(scope="module")
def started_runs(request, tmp_path_factory):
    """`wismo study run` on the helpdesk study, and on a copy whose focused server drops a comment, started at once
    and as early as a test of this file asks for it (the `wismo study check` runs and the memory study then run
    alongside: the file's slowest part overlaps the rest). Not started when no selected test reads the runs (make
    quick); any still running at the end is stopped."""
    if not any("runs" in item.fixturenames for item in request.session.items):
        yield None
        return
    root = tmp_path_factory.mktemp("runs")
    faulty = helpdesk_copy(
        root / "faulty", (FOCUSED_COMMAND, FOCUSED_COMMAND + '\nenv = { HELPDESK_FAULT = "drop-comment" }')
    )
    ok_out, fault_out = root / "ok", root / "fault"
    before = listing(OUTPUTS)
    processes = {
        "ok": wismo(root / "ok-logs", "study", "run", str(HELPDESK_TOML), "--out", str(ok_out)),
        # One notebook at a time: the failing comparison (01) runs first in a fresh folder (unless outputs/ holds a
        # longer run of 02 from `make report`), and the other is then not started.
        "fault": wismo(root / "fault-logs", "study", "run", str(faulty), "--out", str(fault_out), "--jobs", "1"),
    }
    yield Started(processes, ok_out, fault_out, before)
    for process in processes.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def checks(started_runs, tmp_path_factory) -> dict[str, Done]:
    """`wismo study check` on the helpdesk study and on broken copies of it, all started at once. One copy breaks
    both designs' tools (the focused entry renamed, a granular link's argument misnamed): every problem of every
    server is listed in one run, and each server is started once for both."""
    root = tmp_path_factory.mktemp("checks")
    files = {
        "helpdesk": HELPDESK_TOML,
        "tools": helpdesk_copy(
            root / "tools",
            ('tool = "get_ticket_context"', 'tool = "get_context"'),
            ('argument = "customerId"', 'argument = "customer"'),
        ),
        "unreachable": helpdesk_copy(root / "unreachable", (GRANULAR_COMMAND, f'command = ["{NO_SUCH_SERVER}"]')),
        "invalid": helpdesk_copy(root / "invalid", ("[designs.focused]", "[designs.focused\n")),
        # The refusals: each one sentence naming the design, the step and the key, and exit 2.
        "pattern": helpdesk_copy(root / "pattern", ('"{ticketId}" } }', '"{ticketId}" }, pattern = "(?P<id" }')),
        "from": helpdesk_copy(root / "from", ('from = "customerId"', 'from = "customerId || "')),
        "template": helpdesk_copy(
            root / "template", ('argument = "commentId"', 'arguments = { commentId = "{item}", since = "{day}" }')
        ),
        # read = "structured" on a tool whose listing declares no output schema: a problem only the server tells.
        "structured": helpdesk_copy(root / "structured", ('"{ticketId}" } }', '"{ticketId}" }, read = "structured" }')),
    }
    return finished({name: wismo(root / f"{name}-logs", "study", "check", str(path)) for name, path in files.items()})


def test_check_passes_on_the_helpdesk_study(checks):
    done = checks["helpdesk"]
    assert done.returncode == 0, done.stderr
    assert "valid; 2 designs reached (granular, focused)" in done.stdout
    assert "2 cases, 1 unfriendly input." in done.stdout
    assert "Traceback" not in done.stderr


def assert_refused(done: Done, count: int = 1) -> list[str]:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert len(done.problems) == count, done.stderr
    assert f"{count} problem{'s' if count != 1 else ''}:" in done.stderr
    assert all(one_sentence(p) for p in done.problems), done.problems
    return done.problems


def test_check_names_an_entry_tool_the_server_lacks(checks):
    problems = assert_refused(checks["tools"], count=3)
    renamed = [p for p in problems if "get_context" in p]
    assert renamed == [
        'design "focused": entry calls get_context, which the server does not offer; it offers get_ticket_context.'
    ], problems
    assert problems[-1] == renamed[0]  # the designs in the file's order, every problem of both listed in one run


def test_check_names_a_link_argument_the_tool_does_not_take(checks):
    problems = assert_refused(checks["tools"], count=3)
    assert 'design "granular": links[1] passes customer to get_customer, which takes customerId.' in problems
    assert 'design "granular": links[1] leaves out customerId, which get_customer requires.' in problems


def test_check_names_the_design_whose_server_cannot_be_reached(checks):
    (problem,) = assert_refused(checks["unreachable"])  # the focused server was reached: no problem of its own
    assert problem.startswith('design "granular": the server cannot be reached'), problem
    assert NO_SUCH_SERVER in problem


REFUSED = {
    "pattern": "design \"focused\": entry.pattern '(?P<id' does not compile as a regular expression (missing >, "
    "unterminated name at position 4).",
    "from": "design \"granular\": links[1].from 'customerId || ' is not a JMESPath expression (Invalid jmespath "
    "expression: Incomplete expression).",
    "template": 'design "granular": links[2].arguments names {day}, which no case has.',
    "structured": 'design "focused": entry has read = "structured", but get_ticket_context declares no output schema, '
    'so its results carry no structuredContent; read its text (read = "json", read = "text" or a pattern).',
}


@pytest.mark.parametrize("name", REFUSED)
def test_check_refuses_a_step_that_cannot_read_or_follow_in_one_sentence(checks, name):
    (problem,) = assert_refused(checks[name])
    assert problem == REFUSED[name]


def test_check_refuses_an_invalid_file_without_a_traceback(checks):
    (problem,) = assert_refused(checks["invalid"])
    assert problem.startswith("is not valid TOML"), problem


def test_an_unreachable_server_with_a_setup_hint_is_still_one_sentence(tmp_path):
    path = helpdesk_copy(
        tmp_path,
        ("reference = ", 'setup = "Install the servers first: pip install helpdesk."\nreference = '),
        (GRANULAR_COMMAND, f'command = ["{NO_SUCH_SERVER}"]'),
        (FOCUSED_COMMAND, f'command = ["{NO_SUCH_SERVER}-too"]'),
    )
    problems = anyio.run(servers.check, declaration.load(path))
    assert len(problems) == 2 and all("Install the servers first" in p for p in problems), problems
    assert all(one_sentence(p) for p in problems), problems


# ---------------------------------------------------------------------------------------------------------------
# 7. The memory study, on the MCP reference memory server as `make peers` pins it (here, before 5 and 6: it runs
# while the study runs go on).


@pytest.mark.anyio
@pytest.mark.usefixtures("started_runs")  # the study runs go on meanwhile
async def test_the_memory_study_graph_design_contains_the_search_evidence():
    from wismo.reports.analyses import comparison

    peers.installed("peer-npm")
    assert peers.npm_version("@modelcontextprotocol/server-memory") == peers.pin("PEER_NPM")
    graph_before = hashlib.sha256(MEMORY_GRAPH.read_bytes()).hexdigest()
    study = declaration.load(MEMORY_TOML)
    assert (study.match, study.reference, list(study.designs)) == ("contains", "search", ["search", "graph"])
    result = await comparison.run(study=study)
    cases = result["cases"]
    assert [c["label"] for c in cases] == [c.label for c in study.cases] and len(cases) == 5
    assert all(c["equal"] and c["outcome"] == "evidence" for c in cases), [c["differences"][:1] for c in cases]
    assert result["summary"]["allEqual"] and result["study"]["match"] == "contains"
    assert len({c["graph"]["bytes"] for c in cases}) == 1  # read_graph returns the whole graph whatever the query
    assert len({c["search"]["bytes"] for c in cases}) > 1  # the search's evidence depends on the query
    assert all(c["graph"]["calls"] == 1 and c["search"]["calls"] == 3 for c in cases)
    assert hashlib.sha256(MEMORY_GRAPH.read_bytes()).hexdigest() == graph_before


# ---------------------------------------------------------------------------------------------------------------
# 5 and 6. `wismo study run`: the helpdesk as it is, and with a comment dropped by the focused server.


@dataclass
class Runs:
    ok: Done
    ok_out: Path
    fault: Done
    fault_out: Path
    outputs_before: dict
    outputs_after: dict


@pytest.fixture(scope="module")
def runs(started_runs) -> Runs:
    """Both study runs, finished, and the listing of outputs/ from before they started to after they ended."""
    done = finished(started_runs.processes)
    return Runs(
        done["ok"], started_runs.ok_out, done["fault"], started_runs.fault_out, started_runs.before, listing(OUTPUTS)
    )


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_run_exits_0_and_writes_the_study_reports(runs):
    assert runs.ok.returncode == 0, runs.ok.stderr[-3000:]
    assert "Traceback" not in runs.ok.stderr
    assert "2 reports for Helpdesk" in runs.ok.stdout
    for page in ("01-equivalence", "01-equivalence-reader", "02-context-cost", "02-context-cost-reader"):
        assert (runs.ok_out / "html" / f"{page}.html").is_file(), page
    index = (runs.ok_out / "index.html").read_text(encoding="utf-8")
    assert "Helpdesk" in index and "html/01-equivalence.html" in index and "html/02-context-cost.html" in index


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_run_compares_the_helpdesk_designs(runs):
    result = json.loads((runs.ok_out / "deterministic-comparison.json").read_text(encoding="utf-8"))
    summary = result["summary"]
    assert summary["allEqual"] is True and summary["designs"] == ["granular", "focused"]
    assert (summary["reference"], summary["cases"], summary["unfriendly"]) == ("granular", 2, 1)
    assert [(c["label"], c["outcome"]) for c in result["cases"]] == [
        ("escalated, three comments", "evidence"),
        ("open, no comments", "evidence"),
        ("unknown ticket", "rejected alike"),
    ]
    assert result["cases"][0]["granular"]["calls"] == 5 and result["cases"][0]["focused"]["calls"] == 1
    # Report 01 shows what each design gathered: the lead case in the reader's version, every other in the full one.
    full = (runs.ok_out / "html" / "01-equivalence.html").read_text(encoding="utf-8")
    reader = (runs.ok_out / "html" / "01-equivalence-reader.html").read_text(encoding="utf-8")
    assert full.count("<details>") == 2 and reader.count("<details>") == 1 and "wismo-evidence" in reader
    assert result["study"] == {
        "title": "Helpdesk",
        "file": "helpdesk.toml",
        "question": "What is the state of ticket {ticketId}?",
        "match": "equal",
        "key": "ticketId",
        "reference": "granular",
        "designs": {
            "granular": {"transport": "stdio", "startedByWismo": True},
            "focused": {"transport": "stdio", "startedByWismo": True},
        },
    }


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_run_accounts_the_helpdesk_by_its_own_key(runs):
    cost = json.loads((runs.ok_out / "context-cost.json").read_text(encoding="utf-8"))
    rows = cost["ourServers"]
    assert {(r["design"], r["ticketId"]) for r in rows} == {
        (d, t) for d in ("granular", "focused") for t in ("T-1001", "T-1002")
    }
    assert not any("orderId" in r for r in rows)
    assert cost["study"]["key"] == "ticketId" and cost["study"]["designs"] == ["granular", "focused"]
    assert "calibration" not in cost and "againstPublished" not in cost and "caseStudy" not in cost


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_run_says_what_the_reader_version_leaves_out(runs):
    reader = (runs.ok_out / "html" / "02-context-cost-reader.html").read_text(encoding="utf-8")
    reader = reader.replace("&#39;", "'").replace("&#x27;", "'")
    assert "Left out here: sections 4 and 5" in reader
    assert "It is left out because this study publishes no conversation with two or more requests" in reader
    assert "Left out here: sections 1 and 2" in reader  # the helpdesk's file does not reproduce the case study


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_run_leaves_the_repository_outputs_alone(runs):
    assert runs.outputs_after == runs.outputs_before


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_run_exits_1_naming_the_differing_case_and_its_first_difference(runs):
    done = runs.fault
    assert done.returncode == 1, (done.stdout, done.stderr[-3000:])
    assert "Traceback" not in done.stderr
    # What the run wrote is in its staging folder, which the last line names; the --out folder is as it was (new).
    staged = done.staged.parent
    assert done.staged.is_file() and staged.parent == runs.fault_out.parent and list(runs.fault_out.iterdir()) == []
    result = json.loads((staged / "deterministic-comparison.json").read_text(encoding="utf-8"))
    differing = [c for c in result["cases"] if not c["equal"]]
    assert [c["label"] for c in differing] == [FAULTY]
    path = differing[0]["differences"][0]["path"]
    assert path == "comments"  # granular follows three comments, the faulty focused context holds two
    (line,) = done.problems
    assert f"case {FAULTY!r}" in line and f"at {path}," in line, line
    assert "open, no comments" not in done.stderr
    assert (staged / "html" / "01-equivalence.html").is_file()  # the report as far as it ran
    assert 'href="html/01-equivalence.html"' in done.staged.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------------
# 8. The README's example is the tested one; a study never writes into the repository; recorded runs of a study.


def test_the_readme_shows_the_helpdesk_study_exactly_as_tested():
    readme = (REPO_ROOT / "docs" / "studies.md").read_text(encoding="utf-8")
    for name in ("helpdesk.toml", "helpdesk.py"):
        assert (HELPDESK / name).read_text(encoding="utf-8") in readme, f"README's {name} differs from the tested one"


def test_a_study_run_refuses_the_repository_as_its_folder():
    from wismo.reports.study_run import StudyRefused, out_folder

    study = declaration.load(HELPDESK_TOML)
    for folder in (REPO_ROOT, OUTPUTS):
        with pytest.raises(StudyRefused, match="folder of"):
            out_folder(study, folder)


def test_evaluate_records_a_studys_runs_scored_only_where_a_case_expects(tmp_path):
    from wismo import runs
    from wismo.runs import summaries

    expect = (
        '{ deliveredSkus = [], outstandingSkus = [], delayReasons = [], deliveryEstimate = "none", '
        "missingEvidence = [] }"
    )
    path = helpdesk_copy(tmp_path, ('ticketId = "T-1001"', f'ticketId = "T-1001"\nexpect = {expect}'))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wismo",
            "evaluate",
            "--study",
            str(path),
            "both",
            "1",
            "--runs-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    folders = sorted((tmp_path / "r").iterdir())
    assert [f.name.split("-")[1] for f in folders] == ["focused", "granular"]
    loaded = [runs.load(f) for f in folders]  # each verifies, with the study's designs as the schema's enum
    assert list(loaded[0].manifest["study"]["expectations"]) == ["T-1001"]
    turns = {r.manifest["design"]: {t["orderId"]: t["totals"]["turns"] for t in r.traces} for r in loaded}
    # The scripted backend follows each design's declaration: granular entry, links, answer; focused entry, answer.
    assert turns == {"granular": {"T-1001": 3, "T-1002": 3}, "focused": {"T-1001": 2, "T-1002": 2}}
    rows = summaries.case_rows(loaded)
    assert {r["case"]: r["passed"] is not None for r in rows} == {"T-1001": True, "T-1002": False}
    bad = subprocess.run(
        wismo_argv("evaluate", "--study", str(path), "nope", "1", "--runs-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=TIMEOUT_S,
    )
    assert (
        bad.returncode == 2
        and 'the study has no design "nope": its designs are granular, focused' in bad.stderr
        and "Traceback" not in bad.stderr
    )
    wrong = helpdesk_copy(
        tmp_path / "wrong", ('ticketId = "T-1001"', 'ticketId = "T-1001"\nexpect = { summary = "x" }')
    )
    with pytest.raises(StudyInvalid, match="the five-field scorer needs exactly deliveredSkus"):
        declaration.load(wrong)


def test_a_studys_reports_go_beside_its_file_unless_it_is_in_this_checkout(tmp_path):
    from wismo.core.paths import STUDY_OUTPUTS
    from wismo.reports.study_run import out_folder

    inside = declaration.load(HELPDESK_TOML)
    assert out_folder(inside, None) == STUDY_OUTPUTS / "helpdesk"
    for f in HELPDESK_TOML.parent.iterdir():
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    outside = declaration.load(tmp_path / "helpdesk.toml")
    assert out_folder(outside, None) == tmp_path / "helpdesk-reports" and (tmp_path / "helpdesk-reports").is_dir()
    assert out_folder(outside, tmp_path / "mine") == tmp_path / "mine"
