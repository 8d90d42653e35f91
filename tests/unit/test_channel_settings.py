"""A channel's settings: what the CLI reports, what the client chose, and what a CLI
continuing the session (restart, fork) starts with."""

from __future__ import annotations

import msgspec
from claude_sidecar.channel.settings import ChannelSettings
from claude_sidecar.cli import wire
from claude_sidecar.protocol.api import NewChannelParams

SESSION = "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d"
OTHER = "9a8b7c6d-1e2f-4a3b-8c7d-6e5f4a3b2c1d"


def line(**fields: object) -> wire.CliLine:
    return msgspec.json.decode(msgspec.json.encode(fields), type=wire.CliLine)


def test_a_resumed_channel_continues_the_session_it_resumes_unless_it_forks() -> None:
    options = NewChannelParams(cwd="/tmp", resume=OTHER)

    assert ChannelSettings(options, SESSION, fork=False).session_id == OTHER
    assert ChannelSettings(options, SESSION, fork=True).session_id == SESSION


def test_the_cli_reporting_a_new_model_or_mode_is_a_change_once() -> None:
    settings = ChannelSettings(NewChannelParams(cwd="/tmp"), SESSION, fork=False)
    init = line(
        type="system", subtype="init", session_id=SESSION, model="opus", permissionMode="plan"
    )

    assert settings.reported_line(init) is True
    assert settings.reported_line(init) is False
    assert (settings.model, settings.permission_mode) == ("opus", "plan")


def test_a_continuation_keeps_the_chosen_model_and_the_current_mode() -> None:
    settings = ChannelSettings(
        NewChannelParams(cwd="/tmp", model="sonnet", permission_mode="default"), SESSION, fork=False
    )
    settings.requested_model = "opus"
    settings.reported_line(line(type="system", subtype="status", permissionMode="acceptEdits"))

    options = settings.continuation(cwd="/")

    assert options.resume == SESSION and options.model == "opus"
    assert options.permission_mode == "acceptEdits" and options.cwd == "/"


def test_the_initialize_answer_gives_the_mode_unless_the_client_chose_one() -> None:
    reply = wire.InitializeReply(current_permission_mode="plan")
    chosen = ChannelSettings(
        NewChannelParams(cwd="/tmp", permission_mode="default"), SESSION, fork=False
    )
    unchosen = ChannelSettings(NewChannelParams(cwd="/tmp"), SESSION, fork=False)

    chosen.started(reply)
    unchosen.started(reply)

    assert chosen.permission_mode == "default" and unchosen.permission_mode == "plan"


def test_a_retry_is_a_status_change_and_tasks_are_tracked() -> None:
    settings = ChannelSettings(NewChannelParams(cwd="/tmp"), SESSION, fork=False)
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 10,
        "retry_delay_ms": 500,
        "error_status": 529,
        "error": "overloaded",
    }
    started = {
        "type": "system",
        "subtype": "task_started",
        "task_id": "t1",
        "task_type": "local_bash",
        "description": "sleep",
    }
    ended = {"type": "system", "subtype": "task_notification", "task_id": "t1"}

    assert settings.reported_system("api_retry", msgspec.json.encode(retry)) is True
    assert settings.retry is not None and settings.retry.retry_in_ms == 500
    assert settings.reported_system("task_started", msgspec.json.encode(started)) is False
    assert list(settings.tasks) == ["t1"]
    settings.reported_system("task_notification", msgspec.json.encode(ended))
    assert settings.tasks == {}
    assert settings.status("running", None).retry == settings.retry
