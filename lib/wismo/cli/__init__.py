"""The `wismo` command: one module per subcommand."""

from wismo.cli.main import main

__all__ = ["main"]
