"""`wismo evaluate <design|both> <repetitions> [model] [provider]`: record agent runs into data/runs/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from wismo.cli.parsing import at_least, positive_seconds, subparser, writable_folder
from wismo.core.errors import InputError
from wismo.core.textgrid import plural

NAME = "evaluate"
SUMMARY = "record agent runs into data/runs/: evaluate [--study FILE] <design|both> <repetitions> [model] [provider]"
EXAMPLE = "wismo evaluate focused 3 qwen2.5:7b openai-chat --base-url http://127.0.0.1:11434/v1"
BOTH = "both"  # every design the study declares
LATENCY_PARTS = ("OVERHEAD_MS", "MS_PER_INPUT_TOKEN", "MS_PER_OUTPUT_TOKEN")


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo evaluate` and its options."""
    from wismo.accounting.tokens import framing
    from wismo.mcp.servers import designs
    from wismo.runs.agent.backends import BACKENDS, DEFAULT_TIMEOUT_S
    from wismo.runs.agent.loop import Budgets

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument(
        "design",
        metavar="design",
        help=f"one of the study's designs (or a design wismo serves: {', '.join(designs.names())}), or {BOTH}: every "
        "design the study declares",
    )
    p.add_argument(
        "--study",
        default=None,
        metavar="FILE",
        help="the study whose designs are recorded, with its question and instructions (default: the article's, "
        "data/studies/where-is-my-order.toml); the runs go where the study's `runs` says (default "
        "data/runs/studies/<file stem>/) unless --runs-dir says otherwise",
    )
    p.add_argument("repetitions", type=int, help="runs of every case per design")
    p.add_argument("model", nargs="?", default=None, help="the model id (default: the backend's own)")
    p.add_argument(
        "provider",
        nargs="?",
        default=None,
        choices=BACKENDS,
        help="the backend (default: openai when a model is given, else scripted)",
    )
    p.add_argument("--orders", nargs="*", help="the cases to record, by key (default: every case)")
    p.add_argument(
        "--max-turns", type=int, default=Budgets.max_turns, help="model turns per conversation (default %(default)s)"
    )
    p.add_argument(
        "--max-tool-calls",
        type=int,
        default=Budgets.max_tool_calls,
        help="tool calls per conversation (default %(default)s)",
    )
    p.add_argument(
        "--latency",
        type=float,
        nargs=3,
        metavar=LATENCY_PARTS,
        help="add a modelled elapsed time per request (labelled modelled, kept in its own field)",
    )
    p.add_argument(
        "--runs-dir",
        default=None,
        help="where the run folders go (default: where the study's `runs` says)",
    )
    p.add_argument(
        "--base-url",
        default=None,
        help="an OpenAI-compatible server for openai or openai-chat, e.g. http://127.0.0.1:11434/v1 (Ollama); "
        "no key needed unless the server wants one (then set OPENAI_API_KEY)",
    )
    p.add_argument(
        "--profile",
        default=framing.PYTHON.name,
        choices=list(framing.PROFILES),
        help="scripted backend: how its token estimates frame tool results (accounting.tokens.framing; default "
        "%(default)s)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="seconds to wait for one model request (default %(default)g); a local model on a CPU may need more",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Record the runs, each verified before it is moved into place; exit 2 before writing anything on bad input."""
    import anyio

    from wismo import runs
    from wismo.core import processes
    from wismo.core.paths import ARTICLE_STUDY
    from wismo.core.progress import bar
    from wismo.runs import recording
    from wismo.runs.agent.backends import make
    from wismo.runs.agent.base import BackendError
    from wismo.runs.agent.loop import Budgets, LatencyModel
    from wismo.studies.declaration import load

    provider = args.provider or ("openai" if args.model else "scripted")
    study = load(args.study or ARTICLE_STUDY)
    chosen = list(study.designs) if args.design == BOTH else [args.design]
    study = study.narrowed(chosen)  # a design wismo serves may be named even where the study does not declare it
    case_keys = args.orders if args.orders is not None else [study.case_key(c) for c in study.cases]
    runs_dir = Path(args.runs_dir) if args.runs_dir else study.runs_folder
    recording.check_request(chosen, args.repetitions, case_keys, study)
    at_least("--max-turns", args.max_turns, 1)
    at_least("--max-tool-calls", args.max_tool_calls, 0)
    for name, value in zip(LATENCY_PARTS, args.latency or (), strict=False):
        at_least(f"--latency {name}", value, 0)
    positive_seconds("--timeout", args.timeout)
    writable_folder("--runs-dir", runs_dir)
    # Last: the scripted backend loads its encoding, which no refusal above should wait for.
    try:
        backend = make(provider, args.model, args.base_url, args.timeout, args.profile)
    except BackendError as exc:  # one that cannot be made from what was given (a model, a key, a URL): bad input
        raise InputError(str(exc)) from None
    latency = LatencyModel(*args.latency) if args.latency else None
    total = len(case_keys) * args.repetitions * len(chosen)
    try:
        with bar(total, f"{provider} {'+'.join(chosen)}") as progress:
            folders = anyio.run(
                processes.interruptible_task,
                lambda: recording.evaluate(
                    chosen,
                    args.repetitions,
                    backend,
                    case_keys,
                    study,
                    runs_dir,
                    Budgets(args.max_turns, args.max_tool_calls),
                    latency,
                    progress,
                ),
            )
    except (BackendError, runs.RunInvalid, FileExistsError) as exc:
        print(f"wismo evaluate: {exc}; nothing was written to {runs_dir}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"wismo evaluate: interrupted; nothing was written to {runs_dir}", file=sys.stderr)
        return 130
    print(summary([runs.load(folder) for folder in folders], runs_dir))
    return 0


def summary(recorded: list[Any], runs_dir: Path) -> str:
    """One paragraph on what `evaluate` recorded: backend and model, each design's run folder, cases x
    repetitions, how the conversations ended, and the tokens with their kind; every run has been verified."""
    from collections import Counter

    first = recorded[0].manifest
    per_design = []
    tokens = {}
    for run in recorded:
        m = run.manifest
        ended = Counter(t["outcome"] for t in run.traces)
        outcomes = ", ".join(f"{n:,} {outcome}" for outcome, n in ended.most_common())
        tokens[m["design"]] = m["totals"]["inputTokens"] + m["totals"]["outputTokens"]
        per_design.append(f"{m['design']} in {run.folder.name} ({outcomes})")
    cases, repetitions = len(first["orders"]), first["repetitions"]
    conversations = cases * repetitions
    kind = first["figures"]["tokens"]
    # The scripted backend plays a model's part from a script: say so beside its name, not "model scripted-v1".
    model = f"{first['model']}, scripted: no model" if first["backend"] == "scripted" else f"model {first['model']}"
    split = "; ".join(f"{d} {n:,}" for d, n in tokens.items())
    latency = (
        " Elapsed times are measured; the latency model's times are modelled, in their own field."
        if first.get("latencyModel")
        else " Elapsed times are measured (no latency model)."
    )
    each = "Each run" if len(recorded) > 1 else "The run"
    return (
        f"Recorded {plural(len(recorded), 'run')} with the {first['backend']} backend ({model}) into "
        f"{runs_dir}: {'; '.join(per_design)}. {each} holds {plural(cases, 'case')} x "
        f"{plural(repetitions, 'repetition')} = {plural(conversations, 'conversation')}. Tokens in and out: "
        f"{sum(tokens.values()):,} in total ({split}), {kind}.{latency} Every run verified; `wismo verify` checks "
        "them again."
    )
