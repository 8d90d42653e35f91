#!/usr/bin/env python3
"""A synthetic CLI for faults the real one cannot produce on cue.

It answers control requests (refusing `set_model` to "refuse-me"), and on each user message prints the lines of the file named by
$FAKE_CLI_LINES (bytes, verbatim, so they can be garbage), then a `result`. Only the
standard library: it runs under any python3.
"""

import json
import os
import sys


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "control_request" and message["request"].get("model") == "refuse-me":
        emit({"type": "control_response", "response": {
            "subtype": "error", "request_id": message["request_id"],
            "error": "model refuse-me is not available"}})
    elif message["type"] == "control_request":
        emit({"type": "control_response", "response": {
            "subtype": "success", "request_id": message["request_id"], "response": {}}})
    elif message["type"] == "control_response":
        with open(os.environ["FAKE_CLI_ANSWERS"], "a") as answers:
            answers.write(line)
    elif message["type"] == "user":
        with open(os.environ["FAKE_CLI_LINES"], "rb") as script:
            sys.stdout.buffer.write(script.read())
            sys.stdout.flush()
        emit({"type": "result", "subtype": "success", "is_error": False, "session_id": "s"})
