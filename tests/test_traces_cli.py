"""`wismo traces` on the shipped traces of wismo's own loop (data/traces/): the granular chain with its links, the
modelled saving with its labels, the study file `wismo study check` reads naming only the placeholder; bad input is
one sentence and exit 2 with nothing written; and a new recording gives the shipped traces' chains and tokens."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commands import one_sentence, wismo_argv
from wismo.core.paths import REPO_ROOT
from wismo.runs.traces import analysis
from wismo.studies import declaration

SHIPPED = sorted((REPO_ROOT / "data" / "traces").glob("*.json"))
GRANULAR = ["get_order", "get_payment", "get_reservation", "get_tracking"]


def _wismo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(wismo_argv(*args), cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("traces") / "out"
    done = _wismo("traces", *map(str, SHIPPED), "--out", str(folder), "--price-model", "gpt-4.1-mini-2025-04-14")
    assert done.returncode == 0, done.stderr
    assert "12 conversations" in done.stdout
    assert (
        "top chain with links: get_order → {get_payment, get_reservation x1-2, get_tracking}, 5 conversations; links: "
        "get_payment.paymentId from get_order at paymentId;" in done.stdout
    )
    assert (
        "input tokens per conversation (modelled) of 2,155.0 (tiktoken-estimated (imported traces)), USD" in done.stdout
    )
    return folder


def test_the_shipped_traces_are_both_designs_and_every_case():
    assert [p.name for p in SHIPPED] == ["focused.json", "granular.json"]


def test_the_granular_chain_is_found_with_its_links(out):
    result = json.loads((out / "traces.json").read_text(encoding="utf-8"))
    assert result["conversations"] == 12 and result["read"]["sameCallSpans"] == 30  # each MCP span inside its call
    top = result["chains"][result["topLinkedChain"]]
    assert top["tools"] == GRANULAR and top["conversations"] == 5  # ORD-1003's payment is not captured: no tracking
    links = {(link["from"], link["path"], link["tool"], link["argument"]) for link in top["links"]}
    assert links == {
        ("get_order", "paymentId", "get_payment", "paymentId"),
        ("get_order", "reservationIds[]", "get_reservation", "reservationId"),
        ("get_order", "trackingIds[]", "get_tracking", "trackingId"),
    }
    assert top["modelTurns"] == {"median": 3, "min": 3, "max": 3}
    focused = next(c for c in result["chains"] if c["tools"] == ["get_order_support_context"])
    assert focused["conversations"] == 6 and focused["saving"]["inputTokensSavedPerConversation"] == 0


def test_the_saving_is_modelled_from_the_reported_tokens_and_labelled(out):
    result = json.loads((out / "traces.json").read_text(encoding="utf-8"))
    top = result["chains"][result["topLinkedChain"]]
    saving = top["saving"]
    assert saving["label"] == {
        "today": "tiktoken-estimated (imported traces)",  # the shipped traces say so (wismo.usage.kind)
        "replaced": "modelled",
        "saved": "modelled",
    }
    assert saving["inputTokensSavedPerConversation"] > 0
    # The turn no longer made is the second request: what the chain's conversations sent then, on average, as the
    # imported runs (written by another path from the same spans) hold it.
    (run,) = (out / "runs").glob("imported-granular-*")
    seconds = []
    for path in sorted((run / "traces").glob("*.json")):
        trace = json.loads(path.read_text(encoding="utf-8"))
        if [c["name"] for c in trace["toolCalls"]][-1] == "get_tracking":
            seconds.append(trace["requests"][1]["usage"]["inputTokens"])
    assert len(seconds) == 5 and saving["inputTokensSavedPerConversation"] == pytest.approx(sum(seconds) / 5)
    price = top["price"]
    assert price["priced"] and not price["traced"] and price["as"] == "gpt-4.1-mini-2025-04-14"  # scripted-v1: none
    assert saving["usdSavedPer1000"] == pytest.approx(
        saving["inputTokensSavedPerConversation"] * 1000 * price["inputPerMTok"] / 1e6
    )


def test_the_study_file_names_only_the_placeholder_and_runs_once_it_is_filled_in(out, tmp_path):
    study = out / "study.toml"
    done = _wismo("study", "check", str(study))
    assert done.returncode == 2
    problems = [line for line in done.stderr.splitlines() if line.startswith("  - ")]
    assert len(problems) == 1 and 'design "focused": is a placeholder left to fill in' in problems[0], done.stderr
    text = study.read_text(encoding="utf-8")
    assert 'command = ["{python}", "-m", "wismo", "serve", "granular"]' in text and 'from = "reservationIds[]"' in text
    filled = tmp_path / "study.toml"
    filled.write_text(
        text.replace(
            '["<the command that starts the server with your focused tool>"]',
            '["{python}", "-m", "wismo", "serve", "focused"]',
        ).replace('"<your focused tool>"', '"get_order_support_context"'),
        encoding="utf-8",
    )
    parsed = declaration.load(filled)
    # Every traced case of the entry: ORD-1003, whose shorter chain (no tracking) is another chain, too.
    assert sorted(c.fields["orderId"] for c in parsed.cases) == [f"ORD-100{i}" for i in range(1, 7)]
    # Each step keeps its records under a name of its own, so no record's values overwrite another's.
    assert [f.into for f in parsed.designs["traced"].investigation.links] == ["payment", "reservations", "trackings"]
    done = _wismo("study", "check", str(filled))
    assert done.returncode == 0, done.stderr
    # Filled in with wismo's focused server, the draft runs: every case agrees.
    import anyio

    from wismo.reports import equivalence

    result = anyio.run(
        equivalence.build,
        {"study": str(filled), "transports": ["stdio"], "hostile_count": 0, "output_dir": str(tmp_path / "o")},
    )
    assert result["summary"]["allEqual"] and result["summary"]["casesEqual"] == 6, result["summary"]


def test_bad_trace_input_is_one_sentence_and_exit_2_with_nothing_written(tmp_path):
    bad = tmp_path / "bad.json"
    good = SHIPPED[0].read_text(encoding="utf-8").splitlines()[0]
    bad.write_text(good + "\n" + good[:100] + "\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    earlier = json.dumps({"schema": analysis.SCHEMA, "chains": []})
    (out / "traces.json").write_text(earlier, encoding="utf-8")
    done = _wismo("traces", str(bad), "--out", str(out))
    assert done.returncode == 2 and done.stdout == ""
    line = done.stderr.strip()
    assert line.startswith(f"wismo traces: {bad}, line 2: truncated") and one_sentence(line)
    assert [p.name for p in out.iterdir()] == ["traces.json"] and not list(tmp_path.glob(".out.*"))
    assert (out / "traces.json").read_text(encoding="utf-8") == earlier


def test_a_new_recording_gives_the_shipped_chains_and_tokens(tmp_path):
    study = declaration.load(REPO_ROOT / "data" / "studies" / "where-is-my-order.toml")
    code = (
        "import anyio, sys\nfrom pathlib import Path\nfrom wismo.studies import declaration\n"
        "from wismo.runs.traces import own_loop\n"
        f"study = declaration.load(Path({str(study.path)!r}))\n"
        f"anyio.run(own_loop.record, study, ['granular', 'focused'], Path({str(tmp_path)!r}))\n"
    )
    # Its own process: the recording sets the process's tracer provider, which OpenTelemetry allows once.
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    fresh = analysis.analyse(sorted(tmp_path.glob("*.json")))
    shipped = analysis.analyse(SHIPPED)
    strip = ("files", "examples")
    assert [{k: v for k, v in c.items() if k not in strip} for c in fresh["chains"]] == [
        {k: v for k, v in c.items() if k not in strip} for c in shipped["chains"]
    ]
    assert fresh["read"] == shipped["read"]


def test_each_trace_file_becomes_a_run_that_verifies(out):
    folders = sorted((out / "runs").iterdir())
    assert [f.name.rsplit("-", 1)[0] for f in folders] == ["imported-focused", "imported-granular"]
    done = _wismo("verify", *map(str, folders))
    assert done.returncode == 0 and done.stdout.count(": verified") == 2, done.stdout + done.stderr
    manifest = json.loads((folders[1] / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["figures"]["tokens"] == "tiktoken-estimated" and manifest["backend"] == "imported"
    assert manifest["source"] == {
        "format": "OTLP JSON (OpenTelemetry traces)",
        "file": "granular.json",
        "providers": ["wismo.scripted"],
    }
    assert manifest["totals"]["cases"] == 6 and manifest["model"] == "scripted-v1"
    trace = json.loads((folders[1] / manifest["files"][0]["path"]).read_text(encoding="utf-8"))
    assert trace["outcome"] == "answered" and trace["question"].startswith("What is happening with my order")
    assert [c["name"] for c in trace["toolCalls"]][:2] == ["get_order", "get_payment"]


def test_the_runs_of_a_study_are_named_by_its_cases_and_a_file_of_no_design_is_refused(tmp_path):
    study = str(REPO_ROOT / "data" / "studies" / "where-is-my-order.toml")
    runs_dir = tmp_path / "runs"
    done = _wismo(
        "traces", *map(str, SHIPPED), "--study", study, "--runs-dir", str(runs_dir), "--out", str(tmp_path / "o")
    )
    assert done.returncode == 0, done.stderr
    (granular,) = runs_dir.glob("imported-granular-*")
    manifest = json.loads((granular / "manifest.json").read_text(encoding="utf-8"))
    assert (
        manifest["orders"] == [f"ORD-100{i}" for i in range(1, 7)]
        and manifest["study"]["file"] == "where-is-my-order.toml"
    )
    other = tmp_path / "someone-else.json"
    other.write_text(SHIPPED[1].read_text(encoding="utf-8"), encoding="utf-8")
    done = _wismo(
        "traces", str(other), "--study", study, "--runs-dir", str(tmp_path / "r2"), "--out", str(tmp_path / "o2")
    )
    assert done.returncode == 2 and "someone_else, none of the study's (granular, focused)" in done.stderr
    assert not (tmp_path / "r2").exists() and not (tmp_path / "o2").exists()


def test_a_path_as_typed_and_a_runs_dir_inside_out(tmp_path):
    done = subprocess.run(
        wismo_argv("traces", "./tests/traces/conventions-example.json", "--no-report", "--out",
         str(tmp_path / "o")),
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = _wismo("traces", str(SHIPPED[0]), "--out", str(tmp_path / "o"), "--runs-dir", str(tmp_path / "o" / "runs"))
    assert done.returncode == 2 and "is inside --out" in done.stderr


def test_without_the_report_the_runs_are_written_only_where_runs_dir_names(tmp_path):
    alone = _wismo("traces", *map(str, SHIPPED), "--out", str(tmp_path / "alone"), "--no-report")
    assert alone.returncode == 0, alone.stderr
    assert sorted(p.name for p in (tmp_path / "alone").iterdir()) == ["study.toml", "traces.json"]
    runs = tmp_path / "runs"
    named = _wismo(
        "traces", *map(str, SHIPPED), "--out", str(tmp_path / "named"), "--no-report", "--runs-dir", str(runs)
    )
    assert named.returncode == 0, named.stderr
    assert sorted(p.name.rsplit("-", 1)[0] for p in runs.iterdir()) == ["imported-focused", "imported-granular"]
    assert (tmp_path / "alone" / "traces.json").read_bytes() == (tmp_path / "named" / "traces.json").read_bytes()
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no hidden runs folder left behind


def test_report_05_says_what_was_read_and_the_saving_priced_or_why_not(out):
    from wismo.reports import trace_chains

    result = json.loads((out / "traces.json").read_text(encoding="utf-8"))
    read = trace_chains.read_sentence(result)
    assert "Read **106 spans** from focused.json, granular.json" in read and "**12 conversations**" in read
    assert read.endswith("their token counts are tiktoken-estimated (imported traces).")
    again = trace_chains.read_sentence({**result, "read": {**result["read"], "duplicateSpans": 3}})
    assert "(imported traces). 3 spans repeated the trace and span id of one already read" in again
    top = result["chains"][result["topLinkedChain"]]
    said = trace_chains.saving_sentence(top)
    assert "**661.8 input tokens per conversation**" in said and "the model named to price it" in said
    unpriced = {**top, "price": {"priced": False, "why": "no price for scripted-v1"}}
    assert "unpriced: no price for scripted-v1." in trace_chains.saving_sentence(unpriced)
    assert trace_chains.check_accounted(result).startswith("Checked: every model call read is counted")
    short = {**result, "read": {**result["read"], "modelCallSpans": result["read"]["modelCallSpans"] + 1}}
    with pytest.raises(AssertionError, match="every model call read is counted in exactly one chain"):
        trace_chains.check_accounted(short)


def test_with_the_study_the_replacement_is_predicted_by_one_accounting_and_checked(tmp_path):
    out = tmp_path / "out"
    done = _wismo(
        "traces", *map(str, SHIPPED), "--study", str(REPO_ROOT / "data" / "studies" / "where-is-my-order.toml"),
        "--out", str(out), "--no-report",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "traces.json").read_text(encoding="utf-8"))
    (check, shorter) = result["checks"]
    assert check["chain"] == " → ".join(GRANULAR) and check["replacement"] == "get_order_support_context"
    assert check["cases"] == 5 and abs(check["errorPercent"]) <= 5, check
    assert shorter["cases"] == 1 and abs(shorter["errorPercent"]) <= 5  # ORD-1003's shorter chain, its own check
    assert set(check) == {"chain", "replacement", "cases", "predictedInput", "observedInput", "errorPercent"}
    # The chain's saving is the same accounting's: today's input less the prediction, over the predicted cases.
    top = result["chains"][result["topLinkedChain"]]
    saving = top["saving"]
    assert saving["inputTokensPerConversationReplaced"] == check["predictedInput"]
    assert saving["model"].startswith("the study's definitions and focused results")
    assert result["replacements"][0]["replaces"] == sorted(GRANULAR)
    assert f"({check['errorPercent']:+.1f}%)" in done.stdout and "predicted get_order" in done.stdout


def test_without_a_replacement_the_saving_is_the_resends_alone_and_said_so():
    result = analysis.analyse(SHIPPED)
    top = result["chains"][result["topLinkedChain"]]
    assert result["checks"] == [] and top["saving"]["model"] == analysis.RESENDS
    assert top["saving"]["inputTokensSavedPerConversation"] == 661.8


def test_why_no_study_file_is_drafted_is_said(tmp_path):
    focused = next(p for p in SHIPPED if p.name == "focused.json")
    done = _wismo("traces", str(focused), "--out", str(tmp_path / "out"), "--no-report")
    assert done.returncode == 0, done.stderr
    assert "no study file drafted: no conversation calls two tools or more" in done.stdout
    assert not (tmp_path / "out" / "study.toml").exists()
    two = {"tools": ["get_order", "get_payment"], "linksCaptured": 0}
    said = analysis.no_links({"chains": [two]})
    assert "content capture off" in said and analysis.CAPTURE in said
    assert analysis.no_links({"chains": [{**two, "linksCaptured": 3}]}).startswith("no argument of a later call")


def test_report_05s_table_gives_a_chain_of_two_models_model_by_model():
    from wismo.reports import trace_chains

    chain = {
        "shown": "get_order → get_payment", "conversations": 3, "share": 1.0, "modelTurns": {"median": 3},
        "saving": {"label": {"today": "provider-reported (imported traces)"}, "inputTokensPerConversationToday": 900,
                   "inputTokensPerConversationReplaced": 600, "inputTokensSavedPerConversation": 300,
                   "usdSavedPer1000": 0.12},
        "byModel": [
            {"model": "gpt-4.1-mini", "savedInputPerConversation": 400.0, "usdPer1000": 0.16},
            {"model": "function:agent", "savedInputPerConversation": 90.0, "usdPer1000": None},
        ],
    }  # fmt: skip
    (row,) = trace_chains.rows({"chains": [chain]})
    assert row["saved per conversation (modelled)"] == "gpt-4.1-mini 400.0; function:agent 90.0"
    assert row["USD saved per 1,000 (modelled)"] == "gpt-4.1-mini 0.1600; function:agent unpriced"


def test_a_quoted_glob_of_compressed_files_gives_the_plain_files_analysis(tmp_path):
    import gzip

    import zstandard

    folder = tmp_path / "collector"
    folder.mkdir()
    granular, focused = (next(p for p in SHIPPED if p.name == f"{d}.json") for d in ("granular", "focused"))
    (folder / "granular.json.gz").write_bytes(gzip.compress(granular.read_bytes()))
    (folder / "focused.json.zst").write_bytes(zstandard.ZstdCompressor().compress(focused.read_bytes()))
    plain = _wismo("traces", str(focused), str(granular), "--out", str(tmp_path / "plain"), "--no-report")
    packed = _wismo("traces", str(folder / "*.json.*"), "--out", str(tmp_path / "packed"), "--no-report")
    assert plain.returncode == 0 and packed.returncode == 0, packed.stderr
    read = [json.loads((tmp_path / name / "traces.json").read_text(encoding="utf-8")) for name in ("plain", "packed")]
    for result in read:
        del result["files"]
    assert read[0] == read[1] and read[0]["conversations"] > 0
    nothing = _wismo("traces", str(folder / "*.none"), "--out", str(tmp_path / "none"), "--no-report")
    assert nothing.returncode == 2 and "matches no file" in nothing.stderr


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A Dask scheduler and two workers, each its own process on 127.0.0.1, as a team runs them; its address."""
    import time

    folder = tmp_path_factory.mktemp("dask")
    address_file = folder / "scheduler.json"
    common = ["--no-dashboard"]
    started = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--scheduler-file",
                str(address_file),
                *common,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=folder,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(2):
            started.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        "--scheduler-file",
                        str(address_file),
                        "--nthreads",
                        "1",
                        "--host",
                        "127.0.0.1",
                        *common,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd=folder,
                )
            )
        from distributed import Client

        address = json.loads(address_file.read_text(encoding="utf-8"))["address"]
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_dask_cluster_local_workers_and_one_pass_give_the_same_analysis(tmp_path, dask_cluster):
    from wismo.bench.trace_file import generate

    # Generated conversations over two files, the second one's also split across a rotation of the Collector's file.
    first, second = tmp_path / "granular.json", tmp_path / "focused.json"
    generate(first, 300_000)
    lines = (REPO_ROOT / "tests" / "traces" / "conventions-example.json").read_text(encoding="utf-8")
    document = json.loads(lines)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    halves = [json.loads(lines), json.loads(lines)]
    halves[0]["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[:4]
    halves[1]["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[4:]
    with first.open("a", encoding="utf-8") as out:
        out.write(json.dumps(halves[0], separators=(",", ":")) + "\n")
    second.write_text(json.dumps(halves[1], separators=(",", ":")) + "\n", encoding="utf-8")
    files = [str(first), str(second)]
    results = {}
    for name, options in {
        "one pass": [],
        "local workers": ["--jobs", "2", "--part-mb", "0.05"],  # the first file in byte ranges, several
        "cluster": ["--dask", dask_cluster, "--part-mb", "0.05"],
    }.items():
        runs = ["--runs-dir", str(tmp_path / f"{name} runs")]
        done = _wismo("traces", *files, "--out", str(tmp_path / name), "--no-report", *options, *runs)
        assert done.returncode == 0, (name, done.stderr[-3000:])
        if name == "local workers":  # the workers stopped once the client let go: no lost data logged on the way
            assert "distributed" not in done.stderr, done.stderr[-3000:]
        results[name] = json.loads((tmp_path / name / "traces.json").read_text(encoding="utf-8"))
    assert results["cluster"] == results["local workers"] == results["one pass"]

    def tree(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

    # The imported runs too: the conversations come back from the workers when runs are written.
    assert tree(tmp_path / "cluster runs") == tree(tmp_path / "one pass runs") != {}
    # The conversation split across the two files is one: as many as when every line is in one file.
    whole = tmp_path / "whole.json"
    whole.write_text(first.read_text(encoding="utf-8") + second.read_text(encoding="utf-8"), encoding="utf-8")
    done = _wismo("traces", str(whole), "--out", str(tmp_path / "whole"), "--no-report")
    assert done.returncode == 0, done.stderr[-3000:]
    one_file = json.loads((tmp_path / "whole" / "traces.json").read_text(encoding="utf-8"))
    assert one_file["conversations"] == results["cluster"]["conversations"] > 20
    assert one_file["chains"] == results["cluster"]["chains"]
    refused = _wismo("traces", *files, "--out", str(tmp_path / "bad"), "--no-report", "--dask", "127.0.0.1:1")
    assert refused.returncode == 2 and "--dask wants a scheduler's address" in refused.stderr
    for size in ("0", "0.001", "nan", "inf"):
        refused = _wismo(
            "traces", *files, "--out", str(tmp_path / "bad"), "--no-report", "--jobs", "2", "--part-mb", size
        )
        assert refused.returncode == 2 and "--part-mb must be a number of MB, at least 0.01" in refused.stderr, size
    assert not (tmp_path / "bad").exists()


def test_captured_content_nested_too_deeply_is_read_as_not_json_and_the_command_completes(tmp_path):
    # Hostile content: every captured value (messages, definitions, arguments, results, OpenLLMetry's input and
    # output) a JSON text nested beyond the readers' depth. It is kept as text, never a traceback.
    deep = "[" * 5000 + '"ORD-1004"' + "]" * 5000
    captured = ("messages", "definitions", "arguments", "result", "traceloop.entity.input", "traceloop.entity.output")
    written = []
    for source in (REPO_ROOT / "tests" / "traces").glob("*.json"):
        document = json.loads(source.read_text(encoding="utf-8"))
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for attribute in span["attributes"]:
                        if attribute["key"].endswith(captured):
                            attribute["value"] = {"stringValue": deep}
                    if any(
                        a["key"] == "gen_ai.operation.name" and a["value"] == {"stringValue": "chat"}
                        for a in span["attributes"]
                    ):
                        span["attributes"].append({"key": "gen_ai.tool.definitions", "value": {"stringValue": deep}})
        path = tmp_path / source.name
        path.write_text(json.dumps(document) + "\n", encoding="utf-8")
        written.append(str(path))
    done = _wismo("traces", *written, "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "traces.json").read_text(encoding="utf-8"))
    assert result["read"]["conversations"] >= 2


def _set(span: dict, key: str, value: dict) -> None:
    """The span's attribute `key` set to the AnyValue `value` (added where the span has none)."""
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key] + [{"key": key, "value": value}]


def _text(value: object) -> dict:
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


DEFINITIONS = [{"type": "function", "name": n, "parameters": {"type": "object"}} for n in ("get_order", "get_tracking")]
# What other agents and hostile input put in a span, with what wismo traces makes of it: read (None), or refused in
# one sentence naming the line (the words given). Never a traceback.
HOSTILE = {
    "an operation name that is a list": (0, "gen_ai.operation.name", {"arrayValue": {"values": []}}, None),
    "output messages whose parts are a number": (1, "gen_ai.output.messages", _text([{"parts": 5}]), None),
    "input tokens beyond 64 bits as a double": (
        1, "gen_ai.usage.input_tokens", {"doubleValue": 1e308}, "gen_ai.usage.input_tokens between 0 and 2**63 - 1"
    ),
    "input tokens as a superscript digit": (
        1, "gen_ai.usage.input_tokens", {"stringValue": "\u00b2"}, "gen_ai.usage.input_tokens as a whole number"
    ),
    "input tokens as a text of 5,000 digits": (
        1, "gen_ai.usage.input_tokens", {"stringValue": "9" * 5000}, "gen_ai.usage.input_tokens as a whole number"
    ),
    "arguments holding a number of 5,000 digits": (2, "gen_ai.tool.call.arguments", {"stringValue": "9" * 5000}, None),
    "a conversation id with half a UTF-16 pair": (1, "gen_ai.conversation.id", {"stringValue": "conv-\ud800"}, None),
    "a tool name with half a UTF-16 pair": (5, "gen_ai.tool.name", {"stringValue": "get_tracking\udc00"}, None),
    "first arguments holding a null in a list": (
        2, "gen_ai.tool.call.arguments", _text({"orderId": "ORD-1004", "tags": [None]}), None
    ),
    "first arguments nested 600 deep": (
        2, "gen_ai.tool.call.arguments", {"stringValue": '{"orderId": "ORD-1004", "d": ' + "[" * 600 + "]" * 600 + "}"},
        None,
    ),
    "definitions with a null description": (
        1, "gen_ai.tool.definitions", _text([d | {"description": None} for d in DEFINITIONS]), None
    ),
    "definitions whose parameters are a list": (
        1, "gen_ai.tool.definitions", _text([d | {"parameters": ["orderId"]} for d in DEFINITIONS]), None
    ),
    "definitions with an enum that is a number": (
        1, "gen_ai.tool.definitions",
        _text([d | {"parameters": {"properties": {"orderId": {"enum": 5}}}} for d in DEFINITIONS]), None,
    ),
}  # fmt: skip


@pytest.mark.parametrize(("span", "key", "value", "refused"), HOSTILE.values(), ids=HOSTILE.keys())
def test_what_other_agents_and_hostile_input_put_in_a_span_is_read_or_refused_in_one_sentence(
    tmp_path, capsys, span, key, value, refused
):
    from wismo.cli.main import main

    document = json.loads((REPO_ROOT / "tests" / "traces" / "conventions-example.json").read_text(encoding="utf-8"))
    _set(document["resourceSpans"][0]["scopeSpans"][0]["spans"][span], key, value)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")  # json's escapes: "\ud800" stays an escape
    code = main(["traces", str(path), "--no-report", "--out", str(tmp_path / "out")])
    said = capsys.readouterr()
    if refused is None:
        assert code == 0, said.err
        result = json.loads((tmp_path / "out" / "traces.json").read_text(encoding="utf-8"))
        if "\\ud8" in path.read_text(encoding="utf-8") or "\\udc" in path.read_text(encoding="utf-8"):
            assert "\ufffd" in json.dumps(result, ensure_ascii=False)  # half a pair reads as U+FFFD, as the Collector's
    else:
        assert code == 2 and f"{path}, line 1: " in said.err and refused in said.err
        assert not (tmp_path / "out").exists()


def test_a_traced_case_toml_cannot_write_is_left_out_of_the_study_saying_so(tmp_path, capsys):
    from wismo.cli.main import main

    document = json.loads((REPO_ROOT / "tests" / "traces" / "conventions-example.json").read_text(encoding="utf-8"))
    _set(
        document["resourceSpans"][0]["scopeSpans"][0]["spans"][2],
        *HOSTILE["first arguments holding a null in a list"][1:3],
    )
    path = tmp_path / "null.json"
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")
    assert main(["traces", str(path), "--no-report", "--out", str(tmp_path / "out")]) == 0
    study = (tmp_path / "out" / "study.toml").read_text(encoding="utf-8")
    assert "[[cases]]" not in study and "# 1 traced case left out: arguments that hold a null" in study


def _wismo_in(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    import os

    environment = {**os.environ, **env}
    return subprocess.run(wismo_argv(*args), cwd=folder, capture_output=True, text=True, timeout=300, env=environment)


def test_out_is_refused_where_replacing_it_would_lose_what_wismo_traces_did_not_write(tmp_path):
    trace = SHIPPED[1]
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine", encoding="utf-8")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / trace.name).write_bytes(trace.read_bytes())
    collector = tmp_path / "collector"  # a Collector's file of the analysis' name is not an earlier run's
    collector.mkdir()
    (collector / "traces.json").write_text(trace.read_text(encoding="utf-8").splitlines()[0], encoding="utf-8")
    earlier = tmp_path / "earlier"  # an earlier run's folder, holding a copy of a trace file read
    earlier.mkdir()
    (earlier / "traces.json").write_text(json.dumps({"schema": analysis.SCHEMA}), encoding="utf-8")
    (earlier / "mine.json").write_bytes(trace.read_bytes())
    study = tmp_path / "studies" / "study.toml"
    study.parent.mkdir()
    study.write_text((REPO_ROOT / "data" / "studies" / "where-is-my-order.toml").read_text(encoding="utf-8"))
    for out, says in [
        (str(kept), "holds what wismo traces did not write (notes.txt), and --out is replaced whole"),
        (str(collector), "holds what wismo traces did not write (traces.json)"),
        (str(inputs), f"holds {inputs / trace.name}, a file this reads"),
        (str(study.parent), f"holds {study}, a file this reads"),
        (str(earlier), f"holds {earlier / 'mine.json'}, a file this reads"),
        (".", "is the folder this runs in or one above it"),
        ("..", "is the folder this runs in or one above it"),
    ]:
        reads = [str(inputs / "*.json"), str(earlier / "mine.json"), "--study", str(study)]
        done = _wismo_in(tmp_path, "traces", *reads, "--out", out, "--no-report")
        line = done.stderr.strip()
        assert done.returncode == 2 and f"--out {out} {says}" in line and one_sentence(line), (out, line)
    assert (kept / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (collector / "traces.json").is_file() and study.is_file() and (earlier / "mine.json").is_file()
    assert [p.name for p in inputs.iterdir()] == [trace.name]
    # Relative to the folder it runs in, the report too (its notebook runs elsewhere); none of it in the checkout.
    done = _wismo_in(tmp_path, "traces", str(trace), "--out", "relative")
    assert done.returncode == 0, done.stderr[-3000:]
    assert {"traces.json", "index.html", "study.toml"} <= {p.name for p in (tmp_path / "relative").iterdir()}
    assert not list(REPO_ROOT.glob(".relative*"))
    # An earlier run's folder is replaced, whole.
    done = _wismo_in(tmp_path, "traces", str(trace), "--out", "relative", "--no-report")
    assert done.returncode == 0 and sorted(p.name for p in (tmp_path / "relative").iterdir()) == [
        "study.toml",
        "traces.json",
    ]


def test_a_file_read_twice_is_said_and_counted_once(tmp_path):
    import gzip

    copy = tmp_path / "granular-copy.json"  # the same bytes under another name: read once
    copy.write_bytes(SHIPPED[1].read_bytes())
    packed = tmp_path / "granular.json.gz"  # the same spans in other bytes: each span counted once
    packed.write_bytes(gzip.compress(SHIPPED[1].read_bytes()))
    given = [str(SHIPPED[1]), str(SHIPPED[1]), str(copy), str(packed)]
    done = _wismo("traces", *given, "--out", str(tmp_path / "o"), "--no-report")
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"{copy} holds the same bytes as {SHIPPED[1]}: read once.\n"
    result = json.loads((tmp_path / "o" / "traces.json").read_text(encoding="utf-8"))
    assert result["files"] == ["granular.json", "granular.json.gz"]  # the path named twice, and the copy, read once
    assert result["read"]["spans"] == 2 * result["read"]["duplicateSpans"] > 0 and result["conversations"] == 6
    assert f"{result['read']['duplicateSpans']} spans repeated the trace and span id" in done.stdout


def test_dask_paths_and_addresses_that_cannot_work_are_one_sentence(tmp_path):
    trace = tmp_path / "granular.json"
    trace.write_bytes(SHIPPED[1].read_bytes())
    done = _wismo_in(tmp_path, "traces", "granular.json", "--dask", "tcp://127.0.0.1:1", "--no-report")
    line = done.stderr.strip()
    assert done.returncode == 2 and line.startswith("wismo traces: granular.json: with --dask the cluster's workers")
    assert one_sentence(line) and str(trace) in line
    # Nothing listens there: Dask's own setting shortens its wait for the test.
    done = _wismo_in(
        tmp_path,
        "traces",
        str(trace),
        "--dask",
        "tcp://127.0.0.1:1",
        "--no-report",
        DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s",
    )
    line = done.stderr.strip()
    assert done.returncode == 2 and "--dask tcp://127.0.0.1:1: no Dask scheduler answered there" in line, line
    assert one_sentence(line) and not (tmp_path / "outputs").exists()
    for options, says in [
        (["--jobs", "2", "--dask", "tcp://127.0.0.1:1"], "give --jobs N (local workers) or --dask ADDRESS"),
        (["--part-mb", "1"], "--part-mb cuts files into parts for workers: give it with --jobs N or --dask"),
    ]:
        done = _wismo_in(tmp_path, "traces", str(trace), "--no-report", *options)
        line = done.stderr.strip()
        assert done.returncode == 2 and says in line and one_sentence(line), line


def test_an_interrupt_stops_the_run_in_one_line_and_leaves_out_as_it_was(tmp_path):
    import os
    import signal

    fifo = tmp_path / "traces.json"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    out.mkdir()
    (out / "traces.json").write_text(json.dumps({"schema": analysis.SCHEMA}), encoding="utf-8")
    command = [sys.executable, "-m", "wismo", "traces", str(fifo), "--out", str(out), "--no-report"]
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(fifo, "w", encoding="utf-8") as writer:  # opens once the command reads: inside the analysis
        writer.write(SHIPPED[1].read_text(encoding="utf-8").splitlines()[0] + "\n")
        writer.flush()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and stderr.strip() == (
        f"wismo traces: stopped by SIGINT; {out} and the runs are as they were."
    )
    assert [p.name for p in out.iterdir()] == ["traces.json"] and not list(tmp_path.glob(".out*"))


def test_a_reader_that_stops_reading_ends_the_command_without_a_traceback(tmp_path):
    command = wismo_argv("traces", str(SHIPPED[1]), "--out", str(tmp_path / "o"), "--no-report")
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()  # as `| head -0` would, before the command writes its summary
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0 and stderr == b"", stderr[-2000:]
    assert (tmp_path / "o" / "traces.json").is_file()  # what it wrote before is whole


def test_files_of_one_name_in_two_folders_are_read_and_refused_only_where_runs_are_written(tmp_path):
    hosts = []
    for host, trace in (("host-a", SHIPPED[1]), ("host-b", SHIPPED[0])):
        (tmp_path / host).mkdir()
        hosts.append(tmp_path / host / "traces.json")
        hosts[-1].write_bytes(trace.read_bytes())
    done = _wismo("traces", *map(str, hosts), "--out", str(tmp_path / "o"), "--no-report")
    assert done.returncode == 0 and "12 conversations" in done.stdout, done.stderr
    done = _wismo("traces", *map(str, hosts), "--out", str(tmp_path / "r"))
    line = done.stderr.strip()
    assert done.returncode == 2 and f"{hosts[0]} and {hosts[1]} both give the design name 'traces'" in line
    assert one_sentence(line) and not (tmp_path / "r").exists()


def test_a_signal_once_out_is_being_replaced_lets_the_run_finish(tmp_path, monkeypatch):
    # From the replace of --out on, a signal no longer stops the run: --out and the runs are put in place together.
    import os
    import signal

    from wismo.cli.main import main
    from wismo.core import atomic

    moved = atomic.put_in_place

    def interrupted_while_moving(folder, target, replace=False):
        os.kill(os.getpid(), signal.SIGINT)
        moved(folder, target, replace)

    monkeypatch.setattr(atomic, "put_in_place", interrupted_while_moving)
    runs = tmp_path / "runs"
    code = main(["traces", str(SHIPPED[1]), "--out", str(tmp_path / "out"), "--no-report", "--runs-dir", str(runs)])
    assert code == 0 and (tmp_path / "out" / "traces.json").is_file() and len(list(runs.iterdir())) == 1


def test_a_signal_once_the_command_stopped_counting_them_is_not_an_interrupt(tmp_path, monkeypatch):
    # A signal once the command's guarded part is over (--out replaced) reaches the handler the command found, not
    # its own: the command would otherwise say --out was as it was when it had just been replaced.
    import os
    import signal
    from contextlib import contextmanager

    from wismo.cli.main import main
    from wismo.core import processes

    stopping = processes.interruptible

    @contextmanager
    def then_a_signal(*args, **kwargs):
        with stopping(*args, **kwargs) as guard:
            yield guard
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(processes, "interruptible", then_a_signal)
    received: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, _frame: received.append(signum))
    try:
        code = main(["traces", str(SHIPPED[1]), "--out", str(tmp_path / "out"), "--no-report"])
    finally:
        signal.signal(signal.SIGINT, before)
    assert code == 0 and received == [signal.SIGINT] and (tmp_path / "out" / "traces.json").is_file()


def test_ctrl_c_stops_local_workers_in_order_without_their_tracebacks(tmp_path):
    # A terminal's Ctrl-C reaches every process of its group: the workers leave stopping to the command.
    import os
    import signal

    fifo = tmp_path / "traces.json"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "wismo", "traces", str(fifo), "--out", str(tmp_path / "out"), "--no-report"]
    process = subprocess.Popen(
        [*command, "--jobs", "2"], cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    with open(fifo, "w", encoding="utf-8") as writer:  # opens once a worker reads it: the pipeline is running
        writer.write(SHIPPED[1].read_text(encoding="utf-8").splitlines()[0] + "\n")
        writer.flush()
        os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-3000:]
    assert (
        stderr.splitlines()[-1] == f"wismo traces: stopped by SIGINT; {tmp_path / 'out'} and the runs are as they were."
    )
    # Neither a worker's own interrupt nor one killed under its nanny (which restarted it, and multiprocessing's
    # tracker then failed); what Dask's client logs as it closes mid-gather is its own.
    for killed in ("KeyboardInterrupt", "KeyError", "Restarting worker"):
        assert killed not in stderr, stderr[-3000:]
    assert not (tmp_path / "out").exists()


def test_the_same_traces_json_with_the_price_cache_off_empty_or_filled(tmp_path):
    from wismo.accounting.cost import price_cache

    cache = tmp_path / "cache"
    written = {}
    for name, folder in (("off", ""), ("empty", str(cache)), ("filled", str(cache))):
        done = subprocess.run(
            wismo_argv(
                "traces",
                *map(str, SHIPPED),
                "--out",
                str(tmp_path / name),
                "--no-report",
                "--price-model",
                "gpt-4.1-mini",
            ),
            cwd=REPO_ROOT,
            env={**os.environ, price_cache.CACHE_ENV: folder},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        written[name] = (tmp_path / name / "traces.json").read_bytes()
        assert (name == "off") != any(cache.glob("prices-genai-prices-*.jsonl"))
    assert written["off"] == written["empty"] == written["filled"]
    prices = [c["price"] for c in json.loads(written["filled"])["chains"]]
    assert prices and all(p["priced"] and p["as"] == "gpt-4.1-mini" and p["inputPerMTok"] == 0.4 for p in prices)
