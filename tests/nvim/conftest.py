"""Fixtures: a headless Neovim with the plugin, whose daemon and CLIs must end with it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import wait_until_dead
from tests.nvim.editor import Editor, StartEditor


@pytest.fixture
def start_editor(daemon_env: dict[str, str], workspace: Path) -> Iterator[StartEditor]:
    """Start Neovims (in the workspace; their daemons with ``env`` added to ``daemon_env``);
    on teardown each quits and its daemon's processes must be gone."""
    editors: list[Editor] = []

    def start(options: dict[str, Any] | None = None, **env: str) -> Editor:
        editor = Editor({**daemon_env, **env}, workspace, options)
        editors.append(editor)
        return editor

    yield start
    for editor in editors:
        editor.quit()
        left = asyncio.run(wait_until_dead(editor.processes))
        assert left == [], f"daemon or CLI processes outlived Neovim: {left}"


@pytest.fixture
def editor(start_editor: StartEditor) -> Editor:
    return start_editor()
