"""The `wismo` command: one module per subcommand, each --help ending with an example, every option explained, the
choices read from the registries, and only the chosen subcommand's registries imported."""

import argparse
import json
import subprocess
import sys
import textwrap

import pytest

from wismo import cli
from wismo.agent.backends import BACKENDS
from wismo.agent.backends import DEFAULT_TIMEOUT_S as MODEL_TIMEOUT_S
from wismo.agent.loop import Budgets
from wismo.audit.measure import DEFAULT_TIMEOUT_S as SERVER_TIMEOUT_S
from wismo.bench import suite
from wismo.cli.main import COMMANDS, parser
from wismo.cli.parsing import EXAMPLE_PREFIX
from wismo.client.connection import TRANSPORTS
from wismo.servers import designs
from wismo.tokens import DEFAULT_ENCODING, PACKAGED_ENCODINGS, framing

SUBCOMMANDS = (
    "serve",
    "compare",
    "report",
    "study",
    "tokens",
    "contract",
    "evaluate",
    "verify",
    "fuzz",
    "bench",
    "peers",
)

TOY = textwrap.dedent('''
    """A toy design that only needs to be listed."""
    from wismo.servers.designs import Design, Investigation

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
    assert done.returncode == 0 and "granular, focused, scoped, toy" in done.stdout, done.stdout
    subs = _subparsers(parser())
    assert "toy" in _option(subs["evaluate"], "design").help
    assert "toy" in _option(subs["compare"], "designs").choices


def test_the_chosen_subcommand_alone_reads_its_registries():
    # `wismo serve` must not pay for the token counters, the agent loop, papermill or the benchmarks.
    probe = (
        "import sys; from wismo.cli.main import parser; parser('serve').parse_args(['serve', 'granular']); "
        "print(' '.join(m for m in ('wismo.tokens', 'wismo.agent.loop', 'papermill', 'wismo.bench', 'mcp') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
    probe = probe.replace("parser('serve').parse_args(['serve', 'granular'])", "parser('evaluate')")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert {"wismo.tokens", "wismo.agent.loop"} <= set(done.stdout.split())


def test_bad_input_gets_one_sentence_and_exit_code_2(tmp_path, capsys):
    assert cli.main(["fuzz", "0", "--out", str(tmp_path / "f.json")]) == 2
    assert capsys.readouterr().err == "wismo fuzz: EXAMPLES must be 1 or more, not 0\n"
    assert cli.main(["compare", "--orders", "ORD-9999", "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wismo compare: not a case of the comparison: ORD-9999;") and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_fuzz_runs_a_tiny_pass_and_writes_where_it_is_told(tmp_path, capsys):
    out = tmp_path / "fuzz.json"
    assert cli.main(["fuzz", "5", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["examplesPerTool"] == 5 and result["totals"]["crashes"] == 0
    assert [d["design"] for d in result["designs"]] == list(designs.names())
    assert capsys.readouterr().out.rstrip().endswith(f"wrote {out}")
