"""The git study's focused design: one MCP tool, get_history, that returns a repository's latest commits with their
messages and changed lines as JSON, the evidence a model would otherwise gather with git_log and a git_show per
commit. It builds the study's repository first (repo.py), so it can be started on its own."""

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

sys.path.insert(0, str(Path(__file__).parent))
from repo import ISOLATED, build  # noqa: E402

REPOSITORY = build(Path(sys.argv[1] if len(sys.argv) > 1 else "git-history/repo")).resolve()
MAX_COUNT = 100


def answer(value) -> CallToolResult:
    """JSON text, or (for a string) one sentence as a tool error."""
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(type="text", text=value)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(value, ensure_ascii=False))])


def git(*args: str) -> str:
    """git's output in the study's repository."""
    env = {**os.environ, **ISOLATED}
    return subprocess.run(["git", *args], cwd=REPOSITORY, env=env, capture_output=True, text=True, check=True).stdout


def changes(commit: str) -> list[dict]:
    """Each file a commit changed, with the lines it added and removed (a root commit: against the empty tree)."""
    files, current, header = [], None, False
    for line in git("show", "--format=", "--no-color", "--no-ext-diff", "--no-renames", commit).splitlines():
        if line.startswith("diff --git "):
            current = {"path": line.split(" b/", 1)[1], "added": [], "removed": []}
            files.append(current)
            header = True
        elif line.startswith("@@"):
            header = False
        elif current is not None and not header and line[:1] in "+-":
            current["added" if line[0] == "+" else "removed"].append(line[1:])
    return files


server = MCPServer("history")


@server.tool()
def get_history(repo_path: str, max_count: int) -> CallToolResult:
    """The repository's latest commits, newest first: each commit's id, author, date and message, and for every file
    it changed the lines it added and removed."""
    if Path(repo_path).resolve() != REPOSITORY:
        return answer(f"There is no repository {repo_path}; this server reads {REPOSITORY.name} only.")
    if not 1 <= max_count <= MAX_COUNT:
        return answer(f"max_count must be between 1 and {MAX_COUNT}, not {max_count}.")
    commits = []
    for record in git("log", f"--max-count={max_count}", "--format=%H%x1f%an%x1f%aI%x1f%s%x1e").split("\x1e"):
        if not record.strip():
            continue
        commit, author, date, message = record.strip("\n").split("\x1f")
        commits.append(
            {
                "commit": commit,
                "author": author,
                "date": str(datetime.fromisoformat(date)),  # "2026-09-01 09:00:00+00:00", as git_log writes it
                "message": message,
                "files": changes(commit),
            }
        )
    if os.environ.get("HISTORY_FAULT") == "invent-line":  # a planted fault: a line the repository never had
        commits[0]["files"][0]["added"].append("A line nobody wrote.")
    return answer({"commits": commits})


server.run()
