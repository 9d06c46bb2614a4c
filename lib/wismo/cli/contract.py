"""`wismo contract [--update]`: check every design's tools/list against the pinned contract, or pin it anew."""

from __future__ import annotations

import argparse
import sys

from wismo.cli.parsing import subparser
from wismo.core.textgrid import plural

NAME = "contract"
SUMMARY = "check every design's tools/list against data/contracts/tools.json"
EXAMPLE = "wismo contract --update"


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo contract` and its option."""
    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument("--update", action="store_true", help="pin the servers' current tools/list on purpose")
    return p


def run(args: argparse.Namespace) -> int:
    """Compare every design's tools/list with the pinned contract (exit 1 on drift), or pin it with --update."""
    import anyio

    from wismo.mcp.client import contract

    now = anyio.run(contract.current)
    if args.update:
        contract.update(now)
        tools = sum(len(t) for t in now["designs"].values())
        print(
            f"pinned {plural(tools, 'tool')} of {plural(len(now['designs']), 'design')} at revision "
            f"{now['protocolRevision']} in {contract.CONTRACT}"
        )
        return 0
    diff = contract.drift(contract.pinned(), now)
    if diff:
        print(diff)
        print(
            "the servers drifted from the pinned contract; if that is intended, run: wismo contract --update",
            file=sys.stderr,
        )
        return 1
    print(f"contract holds: {', '.join(now['designs'])} at revision {now['protocolRevision']}")
    return 0
