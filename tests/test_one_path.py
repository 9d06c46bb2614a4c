"""One path for every study: a study of three designs over servers of a domain that is not orders, with a
[published] block (tests/studies/library), gets from `wismo study run` what the article's study gets: the
comparison, the cost report with a saving per design against the reference, the calibration against its published
figures, the client-framing, cache, price and call-strategy charts, in its own words; the reports it cannot have are
named on its index with why."""

import json
import re
from pathlib import Path

import pytest

from commands import finished, wismo, wismo_argv
from test_answer import opening_of, reader_words, saving_figures, within_budgets
from wismo.core.paths import REPO_ROOT

LIBRARY = REPO_ROOT / "tests" / "studies" / "library" / "library.toml"
# The order-support domain's own words: none may reach the reader of a study that is not about orders.
ORDER_WORDS = re.compile(r"\border(s|'s|ed)?\b|ORD-|orderId", re.IGNORECASE)


def text_of(page: Path) -> str:
    """What a reader of a rendered page reads: the text, without markup, scripts or styles."""
    import html

    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<(style|script)\b.*?</\1>", "", raw, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """`wismo study run` on the library study, as a user runs it."""
    out = tmp_path_factory.mktemp("library")
    done = finished({"library": wismo(out / "logs", "study", "run", str(LIBRARY), "--out", str(out / "reports"))})
    return done["library"], out / "reports"


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_study_runs_and_compares_its_three_designs(run):
    done, out = run
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((out / "deterministic-comparison.json").read_text(encoding="utf-8"))
    s = result["summary"]
    assert (s["designs"], s["reference"], s["allEqual"]) == (["granular", "batched", "focused"], "granular", True)
    assert (s["cases"], s["casesEqual"], s["unfriendly"]) == (3, 3, 1) and "orders" not in s
    calls = {c["label"]: {d: c[d]["calls"] for d in s["designs"]} for c in result["cases"] if not c["unfriendly"]}
    # Batched: the member, then one call per non-empty list; a batch over an empty list asks nothing and gives [].
    assert calls == {
        "two loans and a hold": {"granular": 4, "batched": 3, "focused": 1},
        "a hold only": {"granular": 2, "batched": 2, "focused": 1},
        "three loans": {"granular": 4, "batched": 2, "focused": 1},
    }
    assert result["study"]["designs"]["batched"] == {"transport": "stdio", "startedByWismo": True}


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_cost_report_states_a_saving_per_design_and_calibrates_against_the_published_figures(run):
    _, out = run
    cost = json.loads((out / "context-cost.json").read_text(encoding="utf-8"))
    assert set(cost["headline"]["savingPercent"]) == {"batched", "focused"}
    assert {r["design"] for r in cost["ratios"]} == {"batched", "focused"} and all(
        "memberId" in r for r in cost["ratios"]
    )
    assert cost["study"]["published"] is True and "caseStudy" not in cost  # the file does not ask for the case study
    pub = cost["calibration"]["published"]
    assert (pub["case"], pub["designs"]) == ("M-1", {"first": "granular", "second": "focused"})
    assert pub["firstAdditions"] == {"value": [130, 310], "kind": "derived from published"}
    assert pub["secondFirstRequest"] == {"value": 605, "kind": "derived from published"}  # 640 - 35
    s = cost["sensitivity"]
    assert len(s["rows"]) == 16 and s["bestFit"]["framing"] and len(s["secondTest"]["rows"]) == 4
    assert cost["againstPublished"][0]["published (tokens)"] == 640
    assert {r["tool"] for r in cost["recordTypes"]} >= {"get_member", "get_loans", "get_member_account"}
    assert {c["design"] for c in cost["conversations"]} == {"granular", "batched", "focused"}  # no design of ours
    assert set(cost["strategyHeadline"]["designs"]) == {"batched", "focused"}


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_every_chart_a_study_needs_no_declaration_for_is_drawn_in_its_words(run):
    _, out = run
    full = text_of(out / "html" / "02-context-cost.html")
    for said in (
        "The same results framed by each client profile",  # the client-framing chart's finding
        "each call's input and what it could read from the cache",  # the cache prefix curve
        "The price of the focus case's conversations, per model and design",
        "The focus case's input by design, every call of a turn in one request and one call per request",
        "Best fit (a fit, not a confirmation)",
        "Left out here: sections 1 and 2",
    ):
        assert said in full, said
    # Totals, growth per call, client framing, cache prefix, price and call strategy: six charts, every one drawn.
    assert (out / "html" / "02-context-cost.html").read_text(encoding="utf-8").count("<img ") == 6
    for page in sorted((out / "html").glob("*-reader.html")) + [out / "index.html"]:
        found = ORDER_WORDS.findall(text_of(page))
        assert not found, (page.name, found[:5])


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_its_own_servers_get_hostile_input_naming_their_tools(run):
    _, out = run
    hostile = json.loads((out / "hostile.json").read_text(encoding="utf-8"))
    assert [d["design"] for d in hostile["designs"]] == ["granular", "batched", "focused"]
    assert hostile["totals"] and not hostile["findings"]  # healthy servers: nothing found
    section = text_of(out / "html" / "01-equivalence.html").split("Hostile input", 1)[1]
    for tool in ("get_member", "get_loan", "get_hold", "get_loans", "get_holds", "get_member_account"):
        assert tool in section, tool


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_index_names_the_reports_the_study_does_not_get_and_why(run):
    _, out = run
    index = text_of(out / "index.html")
    assert "wismo: Library accounts" in index and "Three designs" in index
    assert "03-recorded-runs: the study has no recorded runs yet" in index
    assert "04-scale: not every design of this study is one wismo serves" in index


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_index_opens_with_each_designs_saving_in_one_sentence_shape(run):
    _, out = run
    index = (out / "index.html").read_text(encoding="utf-8")
    verdict = json.loads((out / "context-cost.json").read_text(encoding="utf-8"))["verdict"]
    assert [s["design"] for s in verdict["savings"]] == ["batched", "focused"]
    opening = opening_of(index)
    won = max(verdict["savings"], key=lambda s: s["medianPercent"])
    assert f"{won['design']} wins: it {won['says']} than granular" in opening, opening
    other = next(s for s in verdict["savings"] if s is not won)
    assert (
        f"; {other['design']} {other['says']} than granular, {other['range'].removesuffix(' input tokens')}" in opening
    )
    assert "No live model ran in this build" in opening and "--study" in opening
    assert index.count("<img ") == 1 and saving_figures(out) > 5
    assert within_budgets(reader_words(out))


@pytest.mark.anyio
async def test_a_url_design_is_reported_as_streamable_http_and_connect_to_initialized(tmp_path):
    """A design reached at a URL (a server wismo did not start) beside one wismo serves: the comparison runs over
    both transports for the served one, says how each design was reached, and times the URL's as a connect."""
    import subprocess

    from wismo.mcp.client.process import free_port
    from wismo.reports import equivalence

    port = free_port()
    server = subprocess.Popen(
        wismo_argv("serve", "focused", "--http", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        study = tmp_path / "mixed.toml"
        cases = (REPO_ROOT / "data" / "studies" / "where-is-my-order.toml").read_text(encoding="utf-8")
        cases = cases[cases.index("[[cases]]") : cases.index("# Identifiers either design")]
        study.write_text(
            'title = "Mixed"\nquestion = "Where is {orderId}?"\nreference = "granular"\n'
            '[designs.granular]\nserve = "granular"\n'
            f'[designs.focused]\nurl = "http://127.0.0.1:{port}/mcp"\n'
            'entry = { tool = "get_order_support_context", arguments = { orderId = "{orderId}" } }\n' + cases,
            encoding="utf-8",
        )
        await _listening(port)
        result = await equivalence.build({"study": str(study), "orders": ["ORD-1004"], "output_dir": str(tmp_path)})
    finally:
        server.terminate()
        server.wait(10)
    parity = result["transportParity"]
    assert parity["transports"] == ["stdio", "http"]
    assert parity["reached"] == {"granular": ["stdio", "http"], "focused": ["http"]}
    assert result["study"]["designs"]["focused"] == {"transport": "http", "startedByWismo": False}
    assert (
        equivalence.check_parity(result) == "Checked: 1 case, each with the same verdicts and bytes over stdio, http."
    )
    said = equivalence.timing_sentence(result)
    assert "focused" in said and "(connect to initialized)" in said and "granular" in said
    assert "(server start to initialized)" in said


async def _listening(port, deadline_s=30.0):
    """Wait until something accepts connections on 127.0.0.1:port."""
    import socket
    import time

    import anyio

    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            await anyio.sleep(0.1)
    raise TimeoutError(f"nothing listens on {port}")
