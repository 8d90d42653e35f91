"""Neovim with this checkout's plugin and daemon, against the stand-in model: try the client
by hand.

    uv run python -m tests.nvim.playground [--layout right|left|below|above|tab] [--log]

Runs in your terminal (or in tmux: `tmux new -s try 'uv run python -m tests.nvim.playground'`)
with a throw-away HOME and project (hello.py, calc.py; a git repository, for :ClaudeWorktree). Prompts containing these words get
scripted answers: "greet" (an Edit that asks permission), "count" (a Bash tool), "long" (a long
streamed answer), "ponder" (streamed thinking), "which" (AskUserQuestion), "plan" (after
`:ClaudeMode plan`: a plan to approve), "busy" (the API answers 529 three times, then
succeeds); anything else gets a plain answer. No API key and no network are needed.

With ``--shared DIR`` Neovim uses the shared daemon (``daemon = "shared"``) on DIR/daemon.sock,
with DIR as the playground: run it twice with the same DIR (two tmux panes) for two Neovims on
one chat (:ClaudeAttach in the second). The daemon ``connect`` starts stays after both quit
(stop it: ``kill $(cut -d" " -f1 DIR/daemon.sock.lock)``); it answers through the first one's stand-in
model, so quit that one last.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import isolated_env
from tests.nvim.editor import PLUGIN, nvim_binary
from tests.nvim.scenarios import BUSY, COUNT, GREET, LONG, PLAN, PONDER, WHICH_COLOR, scenario
from tests.worktree_repo import git

SCENARIO = scenario(GREET, COUNT, LONG, PONDER, WHICH_COLOR, PLAN, BUSY)


def make_repo_of(project: Path) -> None:
    """``project`` as a git repository on branch main, its files in one commit."""
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "Playground")
    git(project, "config", "user.email", "playground@example.com")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "The playground's project")


def main() -> int:
    """Start the stand-in model, then Neovim in the current terminal until you quit it."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--layout", default="right", choices=["right", "left", "below", "above", "tab"]
    )
    parser.add_argument("--log", action="store_true", help="log to <tmp>/plugin.log at DEBUG")
    parser.add_argument(
        "--shared", metavar="DIR", help="use the shared daemon, with DIR as the playground"
    )
    args = parser.parse_args()
    nvim = nvim_binary()
    if args.shared:
        base = Path(args.shared).resolve()
        base.mkdir(mode=0o700, exist_ok=True)
    else:
        base = Path(tempfile.mkdtemp(prefix="claude-sidecar-playground-"))
    home, project = base / "home", base / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    (project / "hello.py").write_text("print('hello')\n")
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    if not (project / ".git").exists():
        # A repository with one commit: :ClaudeWorktree has a branch to start from.
        make_repo_of(project)
    log = (
        f"log_file = {str(base / 'plugin.log')!r}, log_level = vim.log.levels.DEBUG,"
        if args.log
        else ""
    )
    daemon = (
        f'daemon = "shared", cmd = {{ {sys.executable!r}, "-m", "claude_sidecar", "connect",'
        f' "--socket", {str(base / "daemon.sock")!r} }},'
        if args.shared
        else f'cmd = {{ {sys.executable!r}, "-m", "claude_sidecar", "--stdio" }},'
    )
    init = base / "init.lua"
    init.write_text(f"""
vim.opt.rtp:prepend({str(PLUGIN)!r})
vim.cmd("runtime plugin/claude_sidecar.lua")
vim.o.swapfile = false
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{{v:lua.require'claude_sidecar'.statusline()}} "
require("claude_sidecar").setup({{
  {daemon}
  layout = {args.layout!r}, {log}
}})
""")
    with ScriptedModel(load_scenario(SCENARIO)) as model:
        print(f"playground in {base}", file=sys.stderr)
        return subprocess.run(
            [nvim, "-u", str(init), "hello.py"], cwd=project, env=isolated_env(home, model.url)
        ).returncode


if __name__ == "__main__":
    sys.exit(main())
