#!/usr/bin/env python3
"""A synthetic CLI for faults the real one cannot produce on cue.

It answers control requests (refusing `set_model` to "refuse-me"); with $FAKE_CLI_DELTAS
set it streams that many text deltas per user message (then creates the file named by
$FAKE_CLI_STREAMED, if set); with $FAKE_CLI_HANG it hangs on the first user message
(ignoring SIGTERM); otherwise on each user message prints the lines of the file named by
$FAKE_CLI_LINES (bytes, verbatim, so they can be garbage), then a `result`. With
$FAKE_CLI_SILENT_START it never answers `initialize`: it writes its pid to the file that
names instead (a start that does not end until someone gives up on it). `--version`
prints $FAKE_CLI_VERSION. Only the standard library: it runs under any python3.
"""

import json
import os
import sys


def emit(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if "--version" in sys.argv[1:]:
    # Like the real CLI; $FAKE_CLI_VERSION plays a given one (unset: it cannot tell).
    if os.environ.get("FAKE_CLI_VERSION"):
        print(f"{os.environ['FAKE_CLI_VERSION']} (Claude Code)")
    sys.exit(0)

# The session the daemon started it for: an older CLI's result names the session whose file
# the daemon then waits for.
SESSION = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--session-id=")), "s")

for line in sys.stdin:
    message = json.loads(line)
    if (
        message["type"] == "control_request"
        and message["request"].get("subtype") == "initialize"
        and os.environ.get("FAKE_CLI_SILENT_START")
    ):
        # Written whole or not at all: the test reads it as soon as it exists.
        pid_file = os.environ["FAKE_CLI_SILENT_START"]
        with open(pid_file + ".tmp", "w") as started:
            started.write(str(os.getpid()))
        os.replace(pid_file + ".tmp", pid_file)
    elif message["type"] == "control_request" and message["request"].get("model") == "refuse-me":
        emit(
            {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": message["request_id"],
                    "error": "model refuse-me is not available",
                },
            }
        )
    elif message["type"] == "control_request":
        emit(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": message["request_id"],
                    "response": {},
                },
            }
        )
    elif message["type"] == "control_response":
        with open(os.environ["FAKE_CLI_ANSWERS"], "a") as answers:
            answers.write(line)
    elif message["type"] == "user" and os.environ.get("FAKE_CLI_HANG"):
        # Hang mode: ignore SIGTERM, stop reading and answering; only SIGKILL ends it.
        import signal
        import time

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    elif message["type"] == "user" and os.environ.get("FAKE_CLI_DELTAS"):
        # Load mode: stream N text deltas as fast as the pipe takes them.
        out = sys.stdout.buffer
        for i in range(int(os.environ["FAKE_CLI_DELTAS"])):
            out.write(
                b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
                b'"delta":{"type":"text_delta","text":"%d "}},"session_id":"s"}\n' % i
            )
        out.flush()
        emit({"type": "result", "subtype": "success", "is_error": False, "session_id": "s"})
        if os.environ.get("FAKE_CLI_STREAMED"):
            open(os.environ["FAKE_CLI_STREAMED"], "w").close()
    elif message["type"] == "user":
        with open(os.environ["FAKE_CLI_LINES"], "rb") as script:
            sys.stdout.buffer.write(script.read())
            sys.stdout.flush()
        emit({"type": "result", "subtype": "success", "is_error": False, "session_id": SESSION})
