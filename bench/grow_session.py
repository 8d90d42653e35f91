"""A long stored session for a client's bench: the seed session of tests/long_session.py run
by the real CLI in WORKSPACE (against the stand-in model, in a HOME of its own), then grown
to at least N entries in HOME's project folder for WORKSPACE, where a client opened on
WORKSPACE with that HOME lists and resumes it. Prints one JSON line per size:
``{"entries": ..., "sessionId": ..., "bytes": ...}``.

    uv run python bench/grow_session.py --home H --workspace W --entries 1000,10000

Used by editors/vscode/test/vscode/page-bench.mjs (``--long``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claude_sidecar.cli.discovery import find_cli  # noqa: E402
from claude_sidecar.scripted import ScriptedModel, load_scenario  # noqa: E402
from tests.long_session import SEED_SCENARIO, grow_session, record_seed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--entries", required=True, help="sizes, comma-separated")
    args = parser.parse_args()
    cli = find_cli()
    with (
        ScriptedModel(load_scenario(SEED_SCENARIO)) as model,
        tempfile.TemporaryDirectory(prefix="seed-home-") as seed_home,
    ):
        seed = record_seed(cli, model.url, Path(seed_home), args.workspace.resolve())
    for entries in (int(n) for n in args.entries.split(",")):
        grown = grow_session(seed, args.home, entries)
        made = {"entries": grown.entries, "sessionId": grown.session_id, "bytes": grown.size}
        print(json.dumps(made), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
