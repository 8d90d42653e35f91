"""ACP config options: the session's model and thought level, against the real CLI and the
stand-in model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from claude_sidecar.scripted import ScriptedModel

from tests.acp.client import text
from tests.acp.conftest import Acp
from tests.harness import json_object


def by_id(options: Any) -> dict[str, dict[str, Any]]:
    """Config options by id, as the client got them (JSON)."""
    return {
        o["id"]: o
        for o in (option.model_dump(by_alias=True, exclude_none=True) for option in options)
    }


async def test_a_session_offers_model_and_thought_level_and_switching_them_reaches_the_model(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    session = opened.session_id
    offered = by_id(opened.config_options)

    on_model = await acp.conn.set_config_option(
        config_id="model", session_id=session, value="sonnet"
    )
    on_effort = await acp.conn.set_config_option(
        config_id="effort", session_id=session, value="high"
    )
    answer = await acp.conn.prompt(session_id=session, prompt=[text("hello")])

    assert offered["model"]["category"] == "model"
    assert offered["model"]["currentValue"] == "default"
    assert {"default", "sonnet", "haiku"} <= {o["value"] for o in offered["model"]["options"]}
    assert offered["effort"]["category"] == "thought_level"
    assert offered["effort"]["currentValue"] == "default"
    assert "low" in {o["value"] for o in offered["effort"]["options"]}
    assert by_id(on_model.config_options)["model"]["currentValue"] == "sonnet"
    effort = by_id(on_effort.config_options)["effort"]
    assert effort["currentValue"] == "high"
    assert "default" not in {o["value"] for o in effort["options"]}, "no way back offered"
    assert answer.stop_reason == "end_turn"
    assert "sonnet" in model.main_requests[-1]["model"]
    assert model.main_requests[-1]["output_config"]["effort"] == "high"
    assert acp.client.of(session, "config_option_update") == [], "the client chose them"


async def test_bad_config_options_name_the_field(acp: Acp, workspace: Path) -> None:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    errors: list[RequestError] = []
    for config_id, value in (("nope", "x"), ("model", "gpt-2"), ("effort", "extreme")):
        with pytest.raises(RequestError) as raised:
            await acp.conn.set_config_option(
                config_id=config_id, session_id=opened.session_id, value=value
            )
        errors.append(raised.value)
    with pytest.raises(RequestError) as boolean:
        await acp.conn.set_config_option(
            config_id="model", session_id=opened.session_id, value=True
        )

    data = [json_object(e.data) for e in [*errors, boolean.value]]
    assert [d["field"] for d in data] == ["configId", "value", "value", "value"]
    assert "sonnet" in data[1]["fix"] and "high" in data[2]["fix"]
    assert all(e.code == -32602 for e in [*errors, boolean.value])
