"""What a session lets the client choose: its permission mode (``modes``) and its model and
thought level (``configOptions``).

Pure: no I/O. The models are the ones the session's CLI reported at ``initialize``
(``claude/channelInfo``'s ``models``); the thought levels are the chosen model's
``supportedEffortLevels``, which the daemon sends as the CLI's effort.
"""

from __future__ import annotations

from typing import Any

from acp.schema import SessionMode, SessionModeState

from claude_sidecar.protocol.api import Effort, ModelInfo, PermissionMode

MODES: dict[str, tuple[str, str]] = {
    "default": ("Ask", "Asks before each edit and command"),
    "acceptEdits": ("Accept edits", "Edits files without asking; asks before commands"),
    "plan": ("Plan", "Reads and plans; changes nothing until you approve the plan"),
    "dontAsk": ("Don't ask", "Runs only what settings allow; denies anything else"),
    "auto": ("Auto", "The CLI decides what needs asking"),
    "bypassPermissions": ("Bypass permissions", "Runs every tool without asking"),
}
"""The permission modes a session offers (``session/new``'s ``modes``), by mode id."""

START_MODE: PermissionMode = "default"
"""Every session starts in the mode that asks."""

MODEL = "model"
EFFORT = "effort"
DEFAULT = "default"
"""The model value (and thought level) that leaves the choice to the CLI."""

EFFORTS: tuple[Effort, ...] = ("low", "medium", "high", "xhigh", "max")


def mode_ids(allow_bypass: bool) -> list[str]:
    """The modes a session may switch to (bypassPermissions only when allowed)."""
    return [m for m in MODES if m != "bypassPermissions" or allow_bypass]


def modes(current: str, allow_bypass: bool) -> SessionModeState:
    """A session's ``modes``: the ones it offers and the one it is in."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=m, name=MODES[m][0], description=MODES[m][1])
            for m in mode_ids(allow_bypass)
        ],
    )


class Choice:
    """A session's model and thought level as the client sees them."""

    def __init__(self, models: list[ModelInfo], model: str | None, effort: Effort | None) -> None:
        self.models = models
        values = [m.value for m in models]
        self.model = model if model in values else DEFAULT if DEFAULT in values else None
        self.effort = effort

    def model_values(self) -> list[str]:
        """The model values the client may choose."""
        return [m.value for m in self.models]

    def effort_values(self, model: str | None = None) -> list[str]:
        """The thought levels of ``model`` (default: the chosen one); ``default`` only
        while the session never set one (the CLI's own choice cannot be chosen back)."""
        chosen = model if model is not None else self.model
        info = next((m for m in self.models if m.value == chosen), None)
        levels = [
            e
            for e in EFFORTS
            if (info is not None and e in info.supported_effort_levels) or e == self.effort
        ]
        return ([DEFAULT] if self.effort is None else []) + levels

    def options(self) -> list[dict[str, Any]]:
        """The session's ``configOptions`` (a select per choice the CLI offers)."""
        options: list[dict[str, Any]] = []
        if self.model is not None:
            options.append(
                {
                    "type": "select",
                    "id": MODEL,
                    "name": "Model",
                    "category": "model",
                    "currentValue": self.model,
                    "options": [
                        {"value": m.value, "name": m.display_name, "description": m.description}
                        for m in self.models
                    ],
                }
            )
        levels = self.effort_values()
        if self.model is not None and levels != [DEFAULT]:
            options.append(
                {
                    "type": "select",
                    "id": EFFORT,
                    "name": "Thought level",
                    "category": "thought_level",
                    "currentValue": self.effort or DEFAULT,
                    "options": [
                        {"value": e, "name": "Model default" if e == DEFAULT else e.capitalize()}
                        for e in levels
                    ],
                }
            )
        return options
