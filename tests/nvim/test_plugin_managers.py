"""Installing the plugin with lazy.nvim, vim.pack and packer.nvim, as editors/nvim/README.md
says: each spec of the README, with a file:// clone of this checkout as its URL, runs in a
Neovim started with a generated init.lua (``-u``) and its own XDG directories.

The managers cannot be installed here (only PyPI, npm, Maven and Debian are reachable), so
``tests/nvim/managers/*.lua`` do what each does with a plugin, written from its source: the
runtimepath it sets up, what it sources and when, its hooks (lazy.nvim's ``init``, ``build``,
``cmd`` stubs and ``config``; vim.pack's ``PackChanged`` and ``load`` function; packer's
``run``, ``rtp`` and ``config`` in its compiled loader). vim.pack is Neovim 0.12's and the
tests run Neovim 0.11, so its ``vim.pack.add`` is emulated there with its load function and
``:packadd``. Each manager's first start installs and builds (a Neovim of its own); the
tests then check a later start, before any command and at the first one."""

from __future__ import annotations

import asyncio
import functools
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.checkout import copy_checkout
from tests.env import isolated_env
from tests.harness import wait_until_dead
from tests.nvim.editor import PLUGIN, Editor, nvim_binary

REPOSITORY = PLUGIN.parents[1]
MANAGERS = Path(__file__).parent / "managers"
README_URL = "https://github.com/claude-sidecar/claude-sidecar"
# What setup() in init.lua loads: the options, not the client.
SETUP_ONLY = ["claude_sidecar", "claude_sidecar.config", "claude_sidecar.log"]
SAME_ON_EVERY_CLI = pytest.mark.same_on_every_cli(
    "the plugin's installation; the daemon's part runs on every CLI elsewhere"
)


def readme_block(title: str) -> str:
    """The first ```lua block after ``**<title>**`` in editors/nvim/README.md."""
    readme = (PLUGIN / "README.md").read_text()
    section = readme[readme.index(f"**{title}**") :]
    found = re.search(r"```lua\n(.*?)```", section, re.S)
    assert found, f"no {title} spec in the README"
    return found.group(1)


def plugin_commands() -> list[str]:
    """The commands plugin/claude_sidecar.lua defines."""
    source = (PLUGIN / "plugin" / "claude_sidecar.lua").read_text()
    return re.findall(r'^command\("(\w+)"', source, re.M)


def with_test_setup(spec: str, url: str) -> str:
    """The README's spec with the clone's URL, and no spare CLI (warm_pool 0)."""
    assert README_URL in spec
    spec = spec.replace(README_URL, url)
    for empty, test in (
        ("opts = {},", "opts = { warm_pool = 0 },"),
        ("setup({})", "setup({ warm_pool = 0 })"),
    ):
        spec = spec.replace(empty, test)
    assert "warm_pool = 0" in spec, spec
    return spec


@pytest.fixture(scope="module")
def source_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A git repository of this checkout's files as they are now (the managers clone it)."""
    source = copy_checkout(tmp_path_factory.mktemp("source"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=source, check=True)
    subprocess.run([*git, "add", "-A"], cwd=source, check=True)
    subprocess.run([*git, "commit", "-qm", "snapshot"], cwd=source, check=True)
    return f"file://{source}"


@functools.cache
def users_uv_cache() -> str:
    """The uv cache of the user running the tests."""
    uv = shutil.which("uv")
    assert uv, "uv is not on PATH"
    return subprocess.run(
        [uv, "cache", "dir"], capture_output=True, text=True, check=True
    ).stdout.strip()


class Setup:
    """A user's Neovim set-up: an init.lua and the XDG directories its manager installs into."""

    def __init__(self, root: Path, init_lua: str) -> None:
        self.root = root
        self.xdg = {
            f"XDG_{kind.upper()}_HOME": str(root / kind)
            for kind in ("config", "data", "state", "cache")
        }
        (root / "config" / "nvim").mkdir(parents=True)
        self.init = root / "config" / "nvim" / "init.lua"
        self.init.write_text(init_lua)

    def data(self) -> Path:
        return self.root / "data" / "nvim"

    def env(self, env: dict[str, str]) -> dict[str, str]:
        # The build step's uv makes <clone>/.venv, not the venv this test runs in.
        return {k: v for k, v in env.items() if k != "VIRTUAL_ENV"} | self.xdg

    def first_start(self, env: dict[str, str], extra: list[str] | None = None) -> None:
        """Neovim's first start with this init.lua: the manager installs and builds (with
        this user's uv cache, as a user's build has it: the test's HOME has none)."""
        run = subprocess.run(
            [
                nvim_binary(),
                "--headless",
                "-u",
                str(self.init),
                "-i",
                "NONE",
                *(extra or []),
                "+qa!",
            ],
            env=self.env(env) | {"UV_CACHE_DIR": users_uv_cache()},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Error" not in run.stderr, run.stderr


class InstalledEditor(Editor):
    """A headless Neovim started with a Setup's init.lua (the plugin as its manager loads it)."""

    def __init__(self, setup: Setup, env: dict[str, str], cwd: Path) -> None:
        wrapper = ["env", "-C", str(cwd)] + [f"{k}={v}" for k, v in setup.env(env).items()]
        argv = [
            *wrapper,
            nvim_binary(),
            "--embed",
            "--headless",
            "-u",
            str(setup.init),
            "-i",
            "NONE",
        ]
        self.nvim = pynvim.attach("child", argv=argv)
        self.cwd = cwd
        self.closed = False
        self.processes = []
        self.lua("vim.o.swapfile = false")

    def loaded_modules(self) -> list[str]:
        return sorted(
            self.lua_as(
                list[str],
                "local out = {} for name in pairs(package.loaded) do "
                "if name:match('^claude_sidecar') then table.insert(out, name) end end return out",
            )
        )

    def commands(self) -> dict[str, str]:
        """Each :Claude* command with its description (a lazy.nvim stub has none)."""
        return self.lua_as(
            dict[str, str],
            "local out = {} for name, c in pairs(vim.api.nvim_get_commands({})) do "
            "if name:match('^Claude') then out[name] = c.definition end end return out",
        )


@pytest.fixture
def installed(
    daemon_env: dict[str, str], workspace: Path
) -> Iterator[Callable[[Setup], InstalledEditor]]:
    """Starts a Setup's Neovim in the workspace; on teardown it quits and its daemon's
    processes must be gone."""
    editors: list[InstalledEditor] = []

    def start(setup: Setup) -> InstalledEditor:
        editor = InstalledEditor(setup, daemon_env, workspace)
        editors.append(editor)
        return editor

    yield start
    for editor in editors:
        editor.quit()
        assert asyncio.run(wait_until_dead(editor.processes)) == [], "processes outlived Neovim"


@pytest.fixture(scope="module")
def install_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the installing start: a HOME of its own, no model."""
    return isolated_env(tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def lazy_nvim(
    tmp_path_factory: pytest.TempPathFactory, install_env: dict[str, str], source_url: str
) -> Setup:
    """lazy.nvim with the README's spec, installed and built by a first start."""
    setup = Setup(
        tmp_path_factory.mktemp("lazy"),
        f'package.preload["lazy"] = function() return dofile("{MANAGERS}/lazy.lua") end\n'
        'require("lazy").setup({ spec = {\n'
        f"{with_test_setup(readme_block('lazy.nvim'), source_url)}"
        "} })\n",
    )
    setup.first_start(install_env)
    return setup


@pytest.fixture(scope="module")
def vim_pack(
    tmp_path_factory: pytest.TempPathFactory, install_env: dict[str, str], source_url: str
) -> Setup:
    """vim.pack with the README's init.lua lines, installed and built by a first start."""
    setup = Setup(
        tmp_path_factory.mktemp("vim_pack"),
        f'vim.pack = vim.pack or dofile("{MANAGERS}/vim_pack.lua")\n'
        f"{with_test_setup(readme_block('vim.pack'), source_url)}",
    )
    setup.first_start(install_env)
    return setup


@pytest.fixture(scope="module")
def packer(
    tmp_path_factory: pytest.TempPathFactory, install_env: dict[str, str], source_url: str
) -> Setup:
    """packer.nvim with the README's use(), installed, built and compiled by :PackerSync.
    packer's startup() in init.lua only declares the plugins; its compiled loader
    (plugin/packer_compiled.lua) loads them."""
    root = tmp_path_factory.mktemp("packer")
    setup = Setup(root, "-- packer.nvim: plugin/packer_compiled.lua loads the plugins\n")
    sync = root / "packer_sync.lua"
    sync.write_text(
        f'dofile("{MANAGERS}/packer.lua").install(function(use)\n'
        f"{with_test_setup(readme_block('packer.nvim'), source_url)}"
        "end)\n"
    )
    setup.first_start(install_env, ["-c", f"luafile {sync}"])
    return setup


# ------------------------------------------------------------ the README's lazy.nvim spec


@SAME_ON_EVERY_CLI
def test_the_readme_lazy_spec_loads_on_every_command_of_the_plugin() -> None:
    spec = readme_block("lazy.nvim")
    listed = re.search(r"cmd = \{(.*?)\}", spec, re.S)
    assert listed

    assert sorted(re.findall(r'"(Claude\w*)"', listed.group(1))) == sorted(plugin_commands())


def test_under_lazy_nvim_the_plugin_works_before_its_first_command_and_loads_with_it(
    installed: Callable[[Setup], InstalledEditor], lazy_nvim: Setup
) -> None:
    clone = lazy_nvim.data() / "lazy" / "claude_sidecar"
    editor = installed(lazy_nvim)

    at_startup = editor.loaded_modules()
    stubs = editor.commands()
    assert_works_before_a_command(editor, clone)
    report = checkhealth(editor)
    not_loaded = editor.lua("return not require('lazy').plugins[1].loaded")

    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()

    assert at_startup == []
    assert sorted(stubs) == sorted(plugin_commands())
    assert set(stubs.values()) == {""}, "lazy.nvim's stubs, not the plugin's commands"
    assert not_loaded
    assert "setup() has not run yet: the default options are checked" in report
    assert_health_reports_the_clones_daemon(report, clone)
    assert editor.lua("return require('lazy').plugins[1].loaded") is True
    assert_chat_runs_the_clones_daemon(editor, clone)


def test_lazy_nvims_stub_of_a_first_command_with_arguments_runs_the_plugins_command_with_them(
    installed: Callable[[Setup], InstalledEditor], lazy_nvim: Setup
) -> None:
    editor = installed(lazy_nvim)
    stub = editor.commands()["ClaudeSend"]

    editor.cmd("ClaudeSend hello there")
    editor.wait_for_turn()

    assert stub == ""
    assert editor.commands()["ClaudeSend"] == "Send text (and the selected lines) to Claude"
    assert "> hello there" in editor.chat_lines()
    assert "Hello from the stand-in model!" in editor.chat_lines()


# ------------------------------------------------------------ vim.pack (Neovim 0.12)


def test_under_vim_pack_the_plugin_works_before_its_first_command(
    installed: Callable[[Setup], InstalledEditor], vim_pack: Setup
) -> None:
    clone = vim_pack.data() / "site" / "pack" / "core" / "opt" / "claude_sidecar"
    editor = installed(vim_pack)

    at_startup = editor.loaded_modules()
    commands = editor.lua_as(list[str], "return vim.tbl_keys(vim.api.nvim_get_commands({}))")
    assert_works_before_a_command(editor, clone)
    report = checkhealth(editor)

    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()

    assert at_startup == SETUP_ONLY
    assert set(plugin_commands()) <= set(commands)
    assert "setup() has not run" not in report
    assert_health_reports_the_clones_daemon(report, clone)
    assert_chat_runs_the_clones_daemon(editor, clone)


# ------------------------------------------------------------ packer.nvim


def test_under_packer_the_plugin_works_before_its_first_command(
    installed: Callable[[Setup], InstalledEditor], packer: Setup
) -> None:
    clone = packer.data() / "site" / "pack" / "packer" / "start" / "claude_sidecar"
    editor = installed(packer)

    at_startup = editor.loaded_modules()
    commands = editor.lua_as(list[str], "return vim.tbl_keys(vim.api.nvim_get_commands({}))")
    assert_works_before_a_command(editor, clone)
    report = checkhealth(editor)

    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()

    assert at_startup == SETUP_ONLY
    assert set(plugin_commands()) <= set(commands)
    assert "setup() has not run" not in report
    assert_health_reports_the_clones_daemon(report, clone)
    assert_chat_runs_the_clones_daemon(editor, clone)


# ------------------------------------------------------------ what every manager must give


def assert_works_before_a_command(editor: Editor, clone: Path) -> None:
    """No error at startup; require(), the statusline, both completion sources and :help work."""
    assert editor.lua("return vim.v.errmsg") == ""
    found: dict[str, Any] = editor.lua("""
        local cs = require("claude_sidecar")
        local cmp = require("claude_sidecar.completion.cmp").new()
        local blink = require("claude_sidecar.completion.blink").new({})
        return {
          source = debug.getinfo(cs.setup, "S").source,
          statusline = cs.statusline(),
          cmp = { cmp:get_trigger_characters(), cmp:is_available() },
          blink = { blink:get_trigger_characters(), blink:enabled() },
        }
    """)
    editor.cmd("help :ClaudeSessions")
    help_buffer = editor.lua("return vim.api.nvim_buf_get_name(0)")
    editor.cmd("helpclose")

    assert found["source"] == f"@{clone}/editors/nvim/lua/claude_sidecar/init.lua"
    assert found["statusline"] == ""
    # Registered, and off outside a chat's prompt.
    assert found["cmp"] == [["@", "/"], False]
    assert found["blink"] == [["@", "/"], False]
    assert help_buffer == str(clone / "editors" / "nvim" / "doc" / "claude_sidecar.txt")


def checkhealth(editor: Editor) -> str:
    editor.cmd("checkhealth claude_sidecar")
    report = "\n".join(
        editor.lua_as(list[str], "return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    )
    editor.cmd("bwipeout")
    return report


def assert_health_reports_the_clones_daemon(report: str, clone: Path) -> None:
    assert "No healthcheck found" not in report, report
    assert (
        f"OK daemon command: {clone}/.venv/bin/claude-sidecar --stdio --log-level WARNING "
        "(installed by the build step)" in report
    ), report
    assert re.search(r"OK daemon version: claude-sidecar \d+\.\d+", report), report
    assert "ERROR" not in report, report


def assert_chat_runs_the_clones_daemon(editor: Editor, clone: Path) -> None:
    assert "Hello from the stand-in model!" in editor.chat_lines()
    cmdline = Path(f"/proc/{editor.daemon_pid()}/cmdline").read_bytes().split(b"\0")
    assert any(arg.decode().startswith(str(clone / ".venv" / "bin")) for arg in cmdline), cmdline
