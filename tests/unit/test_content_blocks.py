"""What the conversation reads out of content blocks, live and stored alike."""

from __future__ import annotations

from claude_sidecar.conversation.blocks import agent_report, as_typed, compact_summary

MARKUP = "<tools-used-before-summary>Bash</tools-used-before-summary>\n"


def test_a_sub_agents_report_is_its_text_without_the_clis_framing_for_the_model() -> None:
    result = {
        "status": "completed",
        "agentId": "af49ed0b8dec4e6e0",
        "content": [
            {"type": "text", "text": MARKUP},
            {"type": "text", "text": "Sub result: hi"},
        ],
        "totalToolUseCount": 1,
    }

    assert agent_report(result) == "Sub result: hi"


def test_a_sub_agent_launched_in_the_background_has_no_report_yet() -> None:
    launched = {"isAsync": True, "status": "async_launched", "agentId": "ac43", "prompt": "p"}

    assert agent_report(launched) is None


def test_another_tools_result_is_not_a_report() -> None:
    assert agent_report({"stdout": "hi", "stderr": ""}) is None
    assert agent_report("Error: no such file") is None


def test_a_slash_command_reads_as_typed() -> None:
    typed = "<command-name>/model</command-name>\n<command-args>opus</command-args>"

    assert as_typed(typed) == "/model opus"
    assert as_typed("<bash-input>ls</bash-input>") == "!ls"


def test_a_compaction_summary_reads_without_the_reminders_for_the_model() -> None:
    text = (
        "This session is being continued.\n\n<system-reminder>\n"
        "<tools-used-before-summary></tools-used-before-summary>\n</system-reminder>\n"
        "Summary:\n1. Primary Request"
    )

    assert (
        compact_summary(text) == "This session is being continued.\n\nSummary:\n1. Primary Request"
    )
