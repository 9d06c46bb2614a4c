"""The `wismo` command: one module per subcommand, each --help ending with an example, every option explained, the
choices read from the registries, and only the chosen subcommand's registries imported."""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from commands import wismo_argv
from wismo import cli
from wismo.accounting.tokens import DEFAULT_ENCODING, PACKAGED_ENCODINGS, framing
from wismo.bench import suite
from wismo.cli.main import COMMANDS, parser
from wismo.cli.parsing import EXAMPLE_PREFIX
from wismo.mcp.client.connection import TRANSPORTS
from wismo.mcp.servers import designs
from wismo.runs.agent.backends import BACKENDS
from wismo.runs.agent.backends import DEFAULT_TIMEOUT_S as MODEL_TIMEOUT_S
from wismo.runs.agent.loop import Budgets
from wismo.studies.audit.measure import DEFAULT_TIMEOUT_S as SERVER_TIMEOUT_S

SUBCOMMANDS = (
    "serve",
    "compare",
    "report",
    "study",
    "tokens",
    "traces",
    "contract",
    "evaluate",
    "verify",
    "fuzz",
    "bench",
    "peers",
)

TOY = textwrap.dedent('''
    """A toy design that only needs to be listed."""
    from wismo.mcp.servers.designs import Design, Investigation

    DESIGN = Design(name="toy", summary="listed, never served", color="#D55E00",
                    investigation=Investigation(entry="get_whole_order"), server=lambda: (), contract=False)
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    path = tmp_path / "toy_design.py"
    path.write_text(TOY)
    monkeypatch.setenv(designs.ENV, str(path))
    return path


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _option(p: argparse.ArgumentParser, dest: str) -> argparse.Action:
    return next(a for a in p._actions if a.dest == dest)


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 0
    return capsys.readouterr().out


def test_every_subcommand_is_registered_and_listed(capsys):
    assert tuple(COMMANDS) == SUBCOMMANDS
    assert tuple(_subparsers(parser())) == SUBCOMMANDS
    listing = _help(["--help"], capsys)
    assert all(f"    {name} " in listing for name in SUBCOMMANDS), listing


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_help_ends_with_one_example_of_its_own_command(name, capsys):
    lines = _help([name, "--help"], capsys).rstrip("\n").splitlines()
    assert lines[-1].startswith(f"{EXAMPLE_PREFIX}wismo {name} "), lines[-1]
    assert sum(line.startswith(EXAMPLE_PREFIX) for line in lines) == 1


def test_every_argument_of_every_subcommand_has_help_text():
    missing = [
        f"{name} {action.dest}"
        for name, sub in _subparsers(parser()).items()
        for action in sub._actions
        if not (action.help or "").strip()
    ]
    assert not missing, missing


def test_choices_and_defaults_are_the_registries():
    subs = _subparsers(parser())
    evaluate, tokens, compare = subs["evaluate"], subs["tokens"], subs["compare"]
    # A design is a registered one or a study's (--study), so the help names the registered ones instead of choices.
    assert all(name in _option(evaluate, "design").help for name in [*designs.names(), "both"])
    assert tuple(_option(evaluate, "provider").choices) == BACKENDS
    assert _option(evaluate, "profile").choices == list(framing.PROFILES)
    assert _option(evaluate, "profile").default == framing.PYTHON.name
    assert (_option(evaluate, "max_turns").default, _option(evaluate, "max_tool_calls").default) == (
        Budgets().max_turns,
        Budgets().max_tool_calls,
    )
    assert _option(evaluate, "timeout").default == MODEL_TIMEOUT_S
    assert tuple(_option(tokens, "encoding").choices) == PACKAGED_ENCODINGS
    assert _option(tokens, "encoding").default == DEFAULT_ENCODING
    assert _option(tokens, "timeout").default == SERVER_TIMEOUT_S
    assert _option(compare, "designs").choices == designs.names()
    assert tuple(_option(compare, "transport").choices) == TRANSPORTS
    assert _option(subs["bench"], "only").choices == list(suite.BENCHMARKS)


def test_a_registered_design_appears_in_every_choice_of_a_design(toy):
    done = subprocess.run([sys.executable, "-m", "wismo", "serve", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "granular, focused, scoped, toy" in " ".join(done.stdout.split()), done.stdout
    subs = _subparsers(parser())
    assert "toy" in _option(subs["evaluate"], "design").help
    assert "toy" in _option(subs["compare"], "designs").choices


def test_the_chosen_subcommand_alone_reads_its_registries():
    # `wismo serve` must not pay for the token counters, the agent loop, papermill or the benchmarks.
    probe = (
        "import sys; from wismo.cli.main import parser; parser('serve').parse_args(['serve', 'granular']); "
        "names = ('wismo.accounting.tokens', 'wismo.runs.agent.loop', 'papermill', 'wismo.bench', 'mcp'); "
        "print(' '.join(m for m in names if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
    probe = probe.replace("parser('serve').parse_args(['serve', 'granular'])", "parser('evaluate')")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert {"wismo.accounting.tokens", "wismo.runs.agent.loop"} <= set(done.stdout.split())


def test_bad_input_gets_one_sentence_and_exit_code_2(tmp_path, capsys):
    assert cli.main(["fuzz", "0", "--out", str(tmp_path / "f.json")]) == 2
    assert capsys.readouterr().err == "wismo fuzz: EXAMPLES must be 1 or more, not 0\n"
    assert cli.main(["compare", "--orders", "ORD-9999", "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wismo compare: not a case of the study: ORD-9999;") and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_a_fuzz_run_by_hand_leaves_the_one_the_report_shows():
    from wismo.cli import fuzz
    from wismo.core.paths import OUTPUTS

    assert fuzz.default_out() == OUTPUTS / "fuzz" / "fuzz.json"
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert "wismo fuzz 2000 --out outputs/fuzz.json" in makefile  # make fuzz: the figures notebook 01 reads


@pytest.mark.slow
def test_fuzz_runs_a_tiny_pass_and_writes_where_it_is_told(tmp_path, capsys):
    # On the suite's forked servers: this checks the command, its record and notebook 01's cells over it. The memory
    # a server reports is its own only on a real one (a fork's pid is its launcher's): that is checked by test_fuzz,
    # test_frames and test_http_sessions, on real servers, and not asserted here.
    from wismo.studies.declaration import article

    out = tmp_path / "fuzz.json"
    assert cli.main(["fuzz", "5", "--sessions", "30", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["count"] == 5 and result["totals"]["findings"] == 0 and result["study"]["file"] == Path(STUDY).name
    assert [d["design"] for d in result["designs"]] == list(article().designs)
    assert result["sessions"]["wismo"]["abandoned"] == 30
    printed = capsys.readouterr().out
    assert "hostile cases on 2 designs; findings: crash 0, hang 0" in printed and "30 abandoned sessions" in printed
    assert printed.rstrip().endswith(f"wrote {out}")
    # Notebook 01's make-fuzz cells, as stored, show this run: sentences, tables and the sessions chart.
    shown = _run_hostile_cells(tmp_path, article())
    text = "\n".join(shown["markdown"])
    assert "## Hostile input at scale (`make fuzz`)" in text and "### Frames over stdio" in text
    assert "### Requests to the HTTP side of the designs wismo serves" in text and "URL" not in text
    tools = sum(len(d["arguments"]) for d in result["designs"])
    assert shown["tables"][-3:-1] == [tools, 8] and shown["charts"] == 1
    # Another study's report never shows it.
    assert _run_hostile_cells(tmp_path, cli_study(tmp_path))["markdown"] == []


def cli_study(tmp_path):
    """A study that is not the article's (the helpdesk's)."""
    from wismo.studies.declaration import load

    return load(Path(__file__).resolve().parent / "studies" / "helpdesk" / "helpdesk.toml")


def _run_hostile_cells(output_dir: Path, study) -> dict:
    """Execute notebook 01's cells from its `make fuzz` cell on, with display recorded, on `output_dir`."""
    from notebook_cells import run_cells
    from wismo.reports import study_hostile

    names = {"output_dir": str(output_dir), "chosen_study": study, "study_hostile": study_hostile}
    return run_cells("for shown in hostile.at_scale(", "## The record of this run", names)


# --- Input errors, the registry, serve --http, evaluate's summary, verify, help, make lab (issue 23) ---------------

STUDY = str(Path(__file__).resolve().parents[1] / "data" / "studies" / "where-is-my-order.toml")


def _wismo(*argv: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command, as a user runs it."""
    return subprocess.run(
        wismo_argv(*argv), capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def _one_sentence(done: subprocess.CompletedProcess, command: str, said: str) -> None:
    """Exit 2, nothing on stdout, and on stderr one line from `wismo COMMAND` that contains `said`."""
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and done.stdout == "", done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"wismo{command}: "), done.stderr
    assert said in done.stderr, done.stderr


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a-file"
    path.write_text("not a folder\n")
    return path


INPUT_ERRORS = {
    # name: (argv, with {file} a regular file and {dir} an existing folder, what the sentence says)
    "compare: an order that is no case": (
        ["compare", "--orders", "ORD-9999", "--out", "{dir}/c.json"],
        "not a case of the study: ORD-9999;",
    ),
    "compare: --out is a folder": (["compare", "--orders", "ORD-1004", "--out", "{dir}"], "is a folder"),
    "compare: --out under a file": (["compare", "--out", "{file}/c.json"], "is a file, not a folder"),
    "serve: port out of range": (["serve", "focused", "--http", "99999"], "from 0 to 65535, not 99999"),
    "serve: --http-fd not open": (["serve", "focused", "--http-fd", "987"], "--http-fd 987 is not an open socket"),
    "serve: host not here": (
        ["serve", "focused", "--http", "0", "--host", "no.such.host.invalid"],
        "cannot listen on no.such.host.invalid",
    ),
    "report: --out under a file": (["report", "--out", "{file}/out"], "is a file, not a folder"),
    "study run: --out under a file": (["study", "run", STUDY, "--out", "{file}/out"], "is a file, not a folder"),
    "evaluate: no turns": (
        ["evaluate", "focused", "1", "--max-turns", "0", "--runs-dir", "{dir}"],
        "--max-turns must be 1 or more, not 0",
    ),
    "evaluate: negative calls": (
        ["evaluate", "focused", "1", "--max-tool-calls", "-1", "--runs-dir", "{dir}"],
        "--max-tool-calls must be 0 or more, not -1",
    ),
    "evaluate: negative latency": (
        ["evaluate", "focused", "1", "--latency", "-1", "0", "0", "--runs-dir", "{dir}"],
        "--latency OVERHEAD_MS must be 0 or more, not -1",
    ),
    "evaluate: --runs-dir is a file": (["evaluate", "focused", "1", "--runs-dir", "{file}"], "is a file"),
    "traces: not a trace file": (["traces", "{file}", "--out", "{dir}/t"], "line 1: not JSON"),
    "traces: --out under a file": (["traces", "{file}", "--out", "{file}/out"], "is a file, not a folder"),
    "traces: no file": (["traces", "--out", "{dir}/t"], "give at least one OTLP JSON trace file"),
    "verify: no such folder": (["verify", "{dir}/nope"], "/nope: no such run folder"),
    "verify: a file": (["verify", "{file}"], "a file, not a run folder"),
    "fuzz: --out is a folder": (["fuzz", "1", "--out", "{dir}"], "is a folder"),
    "bench: --out is a folder": (["bench", "--quick", "--only", "tokens", "--out", "{dir}"], "is a folder"),
    "peers: OUT is a folder": (["peers", "{dir}", "a={file}"], "OUT {dir} is a folder"),
}


@pytest.mark.parametrize("argv, said", INPUT_ERRORS.values(), ids=INPUT_ERRORS.keys())
def test_every_subcommands_input_errors_are_one_sentence_and_exit_2(argv, said, tmp_path, a_file):
    folder = tmp_path / "folder"
    folder.mkdir()
    given = [a.format(file=a_file, dir=folder) for a in argv]
    done = _wismo(*given)
    _one_sentence(done, f" {given[0]}", said.format(file=a_file, dir=folder))
    assert [p.name for p in folder.iterdir()] == []  # refused before anything was written


@pytest.mark.parametrize(
    "argv", [["--help"], ["serve", "--help"], ["compare"], ["serve", "focused"], ["evaluate", "focused", "1"]]
)
def test_a_design_file_that_cannot_be_used_is_one_sentence_for_every_command(argv):
    done = _wismo(*argv, env={designs.ENV: "/no/such.py"}, timeout=30)
    command = f" {argv[0]}" if argv[0] in COMMANDS else ""
    _one_sentence(done, command, f"{designs.ENV} names /no/such.py, which is not a readable Python file")


def _announced(proc: subprocess.Popen, within_s: float = 30) -> str:
    """The first line the server writes on stderr, waited for at most `within_s`."""
    import selectors

    with selectors.DefaultSelector() as sel:
        sel.register(proc.stderr, selectors.EVENT_READ)
        assert sel.select(within_s), "the server said nothing on stderr"
    return proc.stderr.readline()


@pytest.mark.anyio
async def test_serve_http_says_where_it_listens_and_a_client_reaches_it_there():
    from wismo.mcp.client.connection import connect

    proc = subprocess.Popen(
        wismo_argv("serve", "focused", "--http", "0"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = _announced(proc)
        found = re.fullmatch(
            r"focused server: Streamable HTTP on (http://127\.0\.0\.1:(\d+)/mcp) \(Ctrl-C stops it\)\n", line
        )
        assert found, line
        async with connect("focused", url=found.group(1)) as conn:
            tools = await conn.list_tools()
        assert [t["name"] for t in tools] == [s.name for s in designs.get("focused").tools()]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and out == "" and "Traceback" not in err, err


def test_serve_http_on_a_taken_port_says_so_in_one_sentence():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = _wismo("serve", "focused", "--http", str(port), timeout=30)
    _one_sentence(done, " serve", f"port {port} on 127.0.0.1 is taken; choose another with --http PORT")
    assert done.stderr == f"wismo serve: port {port} on 127.0.0.1 is taken; choose another with --http PORT\n"


def test_evaluate_ends_with_a_paragraph_on_what_it_recorded(tmp_path):
    done = _wismo("evaluate", "both", "1", "--orders", "ORD-1004", "ORD-1001", "--runs-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    from wismo import runs

    recorded = {r.manifest["design"]: r for r in map(runs.load, sorted(tmp_path.iterdir()))}
    assert set(recorded) == {"granular", "focused"}
    paragraph = done.stdout.rstrip("\n")
    assert "\n" not in paragraph and ": verified" not in paragraph, done.stdout
    total = sum(r.manifest["totals"]["inputTokens"] + r.manifest["totals"]["outputTokens"] for r in recorded.values())
    for fact in (
        "Recorded 2 runs with the scripted backend",
        f"into {tmp_path}:",
        *(f"{d} in {r.folder.name} (2 answered)" for d, r in recorded.items()),
        "2 cases x 1 repetition = 2 conversations",
        f"{total:,} in total",
        "tiktoken-estimated",
    ):
        assert fact in paragraph, (fact, paragraph)


def test_verify_counts_one_problem_in_the_singular(tmp_path):
    from wismo import runs

    source = runs.find()[0]
    run = tmp_path / source.name
    shutil.copytree(source, run)
    (run / "traces" / "extra.json").write_text("{}\n")
    done = _wismo("verify", str(run))
    assert done.returncode == 1 and done.stdout.startswith(f"{run}: 1 problem\n"), done.stdout


def _parsers(p: argparse.ArgumentParser, path: str = "wismo"):
    """Every parser under `p`, nested subcommands (study check, study run) included, with its command line."""
    yield path, p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_option_of_every_parser_at_any_depth_has_help_and_an_example():
    parsers = dict(_parsers(parser()))
    assert {"wismo study check", "wismo study run"} <= set(parsers)
    missing = [f"{path}: {a.dest}" for path, p in parsers.items() for a in p._actions if not (a.help or "").strip()]
    assert not missing, missing
    no_example = [path for path, p in parsers.items() if not (p.epilog or "").startswith(f"{EXAMPLE_PREFIX}{path}")]
    assert not no_example, no_example


@pytest.mark.parametrize("action", ["check", "run"])
def test_study_actions_end_their_help_with_an_example(action):
    done = _wismo("study", action, "--help", timeout=30)
    assert done.returncode == 0 and done.stdout.rstrip().splitlines()[-1].startswith(
        f"{EXAMPLE_PREFIX}wismo study {action} "
    ), done.stdout


def _lab_argv(*make_args: str, env: dict[str, str] | None = None) -> list[str]:
    recipe = subprocess.run(
        ["make", "-s", "-n", "-o", ".venv/.wismo-installed", "lab", *make_args],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        env={**os.environ, **(env or {})},
    ).stdout
    return shlex.split(recipe)


def test_make_lab_port_chooses_jupyterlabs_port():
    argv = _lab_argv("PORT=8899")
    assert "--port" in argv and argv[argv.index("--port") + 1] == "8899", argv
    # Without PORT on make's command line, JupyterLab's own default, even when the environment has a PORT.
    assert "--port" not in _lab_argv() and "--port" not in _lab_argv(env={"PORT": "1234"})
