"""Installing and running the plugin: the daemon command, its log, :checkhealth, changed
files and the :help file."""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from claude_sidecar.cli.compat import TESTED_CLI_VERSIONS
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.conftest import cli_under_test
from tests.env import COMPAT_CLI
from tests.nvim.editor import PLUGIN, Editor, nvim_binary
from tests.nvim.scenarios import GREET, scenario

EDIT_HELLO = scenario(GREET)


def record_messages(editor: Editor) -> None:
    """Keep what the plugin shows the user (vim.notify) in _G.messages."""
    editor.lua("_G.messages = {}; vim.notify = function(msg) table.insert(_G.messages, msg) end")


def messages(editor: Editor) -> list[str]:
    return editor.lua_as(list[str], "return _G.messages")


def checkhealth(editor: Editor) -> str:
    editor.cmd("checkhealth claude_sidecar")
    return "\n".join(editor.lua_as(list[str], "return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))


def open_file(editor: Editor, path: Path) -> int:
    editor.cmd(f"edit {path}")
    return editor.lua_as(int, "return vim.api.nvim_get_current_buf()")


def buffer_lines(editor: Editor, buf: int) -> list[str]:
    return editor.lua_as(list[str], "return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)


# ------------------------------------------------------------ the daemon command


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_a_daemon_command_that_is_not_found_is_named_with_the_option_that_fixes_it(
    start_editor: Callable[..., Editor],
) -> None:
    editor = start_editor({"cmd": ["/nowhere/claude-sidecar", "--stdio"]})
    record_messages(editor)

    editor.cmd("Claude")
    shown = editor.wait(lambda: messages(editor), what="a message")

    assert shown[0].startswith(
        "claude-sidecar: cannot start the daemon `/nowhere/claude-sidecar --stdio`: not found; "
        "set require('claude_sidecar').setup({ cmd = ... })"
    )
    assert "language server" not in shown[0]
    notice = editor.wait(
        lambda: [line for line in editor.chat_lines() if line.startswith("⚠")],
        what="the failure notice in the chat",
    )
    assert "cannot start the daemon" in notice[0]
    assert editor.chat("state") == "failed"


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_a_daemon_command_that_is_not_executable_says_so(
    start_editor: Callable[..., Editor], tmp_path: Path
) -> None:
    daemon = tmp_path / "claude-sidecar"
    daemon.write_text("#!/bin/sh\n")
    daemon.chmod(stat.S_IRUSR | stat.S_IWUSR)
    editor = start_editor({"cmd": [str(daemon), "--stdio"]})
    record_messages(editor)

    editor.cmd("Claude")
    shown = editor.wait(lambda: messages(editor), what="a message")

    assert f"cannot start the daemon `{daemon} --stdio`: not executable;" in shown[0]


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_a_daemon_that_dies_at_start_shows_its_error_output_in_the_chat(
    start_editor: Callable[..., Editor],
) -> None:
    editor = start_editor(
        {
            "cmd": [
                sys.executable,
                "-c",
                "import sys; sys.stderr.write('ImportError: no pygls\\n'); sys.exit(3)",
            ]
        }
    )

    editor.cmd("Claude")
    editor.wait(lambda: editor.chat("state") == "failed", what="the chat to fail")

    notices = [line for line in editor.chat_lines() if line.startswith("⚠")]
    assert notices == [
        "⚠ could not start Claude: the claude-sidecar daemon exited (code 3)",
        "⚠ ImportError: no pygls",
    ]


# ------------------------------------------------------------ the daemon's log


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_the_daemons_log_lines_go_to_the_plugin_log_at_their_level_and_never_to_lsp_log(
    start_editor: Callable[..., Editor], tmp_path: Path, home: Path
) -> None:
    plugin_log = tmp_path / "claude_sidecar.log"
    editor = start_editor({"log_file": str(plugin_log), "log_level": 0})  # TRACE: everything
    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()
    lsp_log = Path(editor.lua("return vim.lsp.log.get_filename()"))
    editor.quit()

    lines = plugin_log.read_text().splitlines()
    daemon_levels = {line.split()[1] for line in lines if " daemon: " in line}
    assert lsp_log.is_relative_to(home)
    assert not lsp_log.exists() or "claude_sidecar" not in lsp_log.read_text()
    assert {"DEBUG", "INFO"} <= daemon_levels, lines[:20]
    assert "ERROR" not in daemon_levels, [line for line in lines if " ERROR daemon: " in line]
    assert any(re.match(r"\S+ DEBUG daemon: claude_sidecar(\.\w+)+: ", line) for line in lines)


# ------------------------------------------------------------ files Claude changed


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_a_buffer_the_user_changed_is_not_clobbered_and_the_user_is_told(
    start_editor: Callable[..., Editor], model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    model.set_scenario(load_scenario(EDIT_HELLO))
    (workspace / "hello.py").write_text("print('hello')\n")
    # A log file: the warning must still reach the user, not only the log.
    editor = start_editor({"permission_mode": "acceptEdits", "log_file": str(tmp_path / "log")})
    record_messages(editor)
    buf = open_file(editor, workspace / "hello.py")
    editor.cmd("normal! Amy own change")
    editor.cmd("Claude")
    editor.type_prompt("greet the world")
    editor.wait_for_turn()

    told = editor.wait(lambda: [m for m in messages(editor) if "hello.py" in m], what="a warning")
    assert buffer_lines(editor, buf) == ["print('hello')my own change"]
    assert (workspace / "hello.py").read_text() == "print('hello, world')\n"
    assert "hello.py changed on disk but has unsaved changes here: not reloaded" in told[0]


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_a_clean_buffer_is_reloaded_and_claude_file_updated_fires(
    start_editor: Callable[..., Editor], model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDIT_HELLO))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    editor.lua("""
        _G.updates = {}
        vim.api.nvim_create_autocmd("User", { pattern = "ClaudeFileUpdated",
          callback = function(args) table.insert(_G.updates, args.data) end })
    """)
    buf = open_file(editor, workspace / "hello.py")
    editor.cmd("Claude")
    editor.type_prompt("greet the world")
    editor.wait_for_turn()

    updates = editor.wait(lambda: editor.lua("return _G.updates"), what="ClaudeFileUpdated")
    assert updates == [{"chat": 1, "path": str(workspace / "hello.py"), "reloaded": True}]
    assert buffer_lines(editor, buf) == ["print('hello, world')"]
    assert editor.lua("return vim.bo[...].modified", buf) is False


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_the_users_file_changed_shell_autocmd_decides_about_reloading(
    start_editor: Callable[..., Editor], model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDIT_HELLO))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    editor.lua("""
        _G.asked = {}
        vim.o.autoread = false  -- with 'autoread' an unchanged buffer reloads without asking
        vim.api.nvim_create_autocmd("FileChangedShell", { callback = function(args)
          table.insert(_G.asked, args.file)
          vim.v.fcs_choice = ""  -- keep the buffer as it is
        end })
    """)
    buf = open_file(editor, workspace / "hello.py")
    editor.cmd("Claude")
    editor.type_prompt("greet the world")
    editor.wait_for_turn()

    asked = editor.wait(lambda: editor.lua("return _G.asked"), what="FileChangedShell")
    assert asked == [str(workspace / "hello.py")]
    assert buffer_lines(editor, buf) == ["print('hello')"]


# ------------------------------------------------------------ :checkhealth


# It shows the daemon's command line as the user configured it.
@pytest.mark.real_daemon_process
def test_checkhealth_reports_the_cli_the_daemon_runs_before_and_while_it_runs(
    start_editor: Callable[..., Editor],
) -> None:
    # No cli_path, no `claude` on PATH: the daemon finds the bundled CLI, or in the
    # compatibility run the one $CLAUDE_SIDECAR_CLI names.
    editor = start_editor()
    cli, version = cli_under_test()
    source = "$CLAUDE_SIDECAR_CLI" if COMPAT_CLI else "claude-agent-sdk bundle"

    before = checkhealth(editor)
    editor.cmd("Claude")
    editor.wait(lambda: editor.chat("state") == "idle", what="the chat to be ready")
    running = checkhealth(editor)

    for report in (before, running):
        assert "OK Neovim 0.11" in report
        assert "OK daemon command: " in report and "-m claude_sidecar --stdio" in report
        assert re.search(r"OK daemon version: claude-sidecar \d+\.\d+", report), report
        assert (
            "OK :ClaudeAgents: every chat of the daemon in one list (<CR> open, d/m/x review/merge/discard)"
            in report
        ), report
        assert (
            f"OK Claude Code CLI the daemon runs: {cli} (version {version}, found via "
            f"{source})" in report
        ), report
        assert (
            "OK CLI authentication: api_key from ANTHROPIC_API_KEY, API at http://127.0.0.1:"
            in report
        ), report
        assert "ERROR" not in report and "WARNING" not in report, report
    assert "daemon not running" in before
    assert f"OK daemon running, pid {editor.daemon_pid()}" in running


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_checkhealth_says_a_neovim_older_than_the_tested_0_11_is_too_old(
    start_editor: Callable[..., Editor],
) -> None:
    editor = start_editor()
    # Neovim 0.10 as far as the plugin can tell: only the PyPI wheel's 0.11 runs here.
    editor.lua(
        "local has = vim.fn.has\n"
        "vim.fn.has = function(feature)\n"
        "  if feature:match('^nvim%-0%.11') then return 0 end\n"
        "  return has(feature)\n"
        "end"
    )

    report = checkhealth(editor)

    assert "ERROR Neovim 0.11 or newer is needed" in report, report
    assert "OK Neovim" not in report


def test_checkhealth_says_why_the_daemon_finds_no_cli(start_editor: Callable[..., Editor]) -> None:
    editor = start_editor({"cli_path": "/nowhere/claude"})

    report = checkhealth(editor)

    assert re.search(r"ERROR Claude Code CLI: .*/nowhere/claude", report), report
    assert "cli_path" in report


def test_checkhealth_warns_about_a_cli_version_the_daemon_is_not_tested_with(
    start_editor: Callable[..., Editor], tmp_path: Path
) -> None:
    old = tmp_path / "claude"
    old.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "1.0.3 (Claude Code)"; exit 0; fi\n'
        "exit 1\n"
    )
    old.chmod(0o755)
    editor = start_editor({"cli_path": str(old)})

    report = checkhealth(editor)

    tested = ", ".join(TESTED_CLI_VERSIONS)
    assert f"WARNING CLI 1.0.3 is not a version the daemon is tested with ({tested})" in report, (
        report
    )


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_checkhealth_names_a_daemon_command_that_is_not_found(
    start_editor: Callable[..., Editor],
) -> None:
    editor = start_editor({"cmd": ["/nowhere/claude-sidecar", "--stdio"]})

    report = checkhealth(editor)

    assert (
        "ERROR daemon command `/nowhere/claude-sidecar --stdio` (setup({ cmd })): not found"
        in report
    )
    assert "setup({ cmd = {" in report


# ------------------------------------------------------------ commands
# (installing with lazy.nvim, vim.pack and packer: test_plugin_managers.py)

COMMANDS = [
    "Claude",
    "ClaudeNew",
    "ClaudeChats",
    "ClaudeClose",
    "ClaudeSend",
    "ClaudeInterrupt",
    "ClaudeMode",
    "ClaudeModel",
    "ClaudeImage",
    "ClaudeFork",
    "ClaudeRewind",
    "ClaudeSessions",
    "ClaudeAttach",
    "ClaudeDetach",
    "ClaudeDiff",
    "ClaudePermissions",
    "ClaudeAgents",
    "ClaudeWorktree",
]


def defined_commands() -> list[str]:
    """The commands plugin/claude_sidecar.lua defines."""
    source = (PLUGIN / "plugin" / "claude_sidecar.lua").read_text()
    return re.findall(r'^command\("(\w+)"', source, re.M)


# ------------------------------------------------------------ :help


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_every_command_has_a_help_tag() -> None:
    help_text = (PLUGIN / "doc" / "claude_sidecar.txt").read_text()
    tags = set(re.findall(r"\*(:Claude\w*)\*", help_text))

    assert set(f":{name}" for name in defined_commands()) <= tags
    assert tags == {f":{name}" for name in COMMANDS}


@pytest.mark.same_on_every_cli(
    "the plugin's own set-up, health and buffer handling; the daemon's part runs on every CLI elsewhere"
)
def test_helptags_makes_the_tags_without_an_error(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc, ignore=shutil.ignore_patterns("tags"))

    run = subprocess.run(
        [
            nvim_binary(),
            "--headless",
            "--clean",
            "-n",
            "-es",
            "-c",
            f"try | helptags {doc} | catch | echo v:exception | cq | endtry",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert run.returncode == 0, run.stdout + run.stderr
    tags = (doc / "tags").read_text().splitlines()
    assert any(line.startswith("claude_sidecar-install\t") for line in tags)
