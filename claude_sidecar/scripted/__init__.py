"""The scripted stand-in model: a local Anthropic Messages API driven by a scenario.

It plays the model for the real Claude Code CLI in tests, benchmarks, editor
client tests and ``claude-sidecar demo``.  The scenario format is documented
in ``docs/scripted-model.md``.
"""

from pathlib import Path

from claude_sidecar.scripted.scenario import Scenario, load_scenario
from claude_sidecar.scripted.server import ScriptedModel, serve

#: The scenario played by ``claude-sidecar demo`` (a haiku written with the Write tool).
DEMO_SCENARIO_PATH: Path = Path(__file__).with_name("demo.json")

__all__ = ["DEMO_SCENARIO_PATH", "Scenario", "ScriptedModel", "load_scenario", "serve"]
