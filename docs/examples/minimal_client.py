"""A complete claude-sidecar client: the daemon as a child process, JSON-RPC in LSP framing on
its stdin/stdout, one chat (docs/client-quickstart.md). Run: minimal_client.py DIR PROMPT."""

import json
import queue
import sys
import threading
from subprocess import PIPE, Popen
from typing import Any

DAEMON = ["claude-sidecar", "--stdio"]  # or ["claude-sidecar", "connect"]: the shared daemon
DONE = ("done", "failed", "denied", "interrupted")  # a tool entry's last statuses


class Client:
    def __init__(self) -> None:
        self.daemon = Popen(DAEMON, stdin=PIPE, stdout=PIPE, start_new_session=True)
        assert self.daemon.stdin and self.daemon.stdout
        self.stdin, self.stdout = self.daemon.stdin, self.daemon.stdout
        self.inbox: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()  # Ctrl-C-safe
        self.last_id, self.answers = 0, dict[int, dict[str, Any]]()  # responses by request id
        self.entries: dict[str, dict[str, Any]] = {}  # the conversation, by entry id
        self.ended: dict[str, Any] = {}  # claude/turnEnded, once the turn is over
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:  # in a thread: each message into the inbox, None at the end
        for line in iter(self.stdout.readline, b""):  # header lines, an empty line, the body
            if line.lower().startswith(b"content-length:"):
                length = int(line[15:])
            elif line == b"\r\n":
                self.inbox.put(json.loads(self.stdout.read(length)))
        self.inbox.put(None)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        request_id = self.last_id = self.last_id + 1
        self.send({"id": request_id, "method": method, "params": params})
        while request_id not in self.answers:  # what arrives meanwhile is handled
            self.take_one()
        if "error" in (answer := self.answers.pop(request_id)):  # code, data.name, data.field
            raise RuntimeError(f"{method} failed: {answer['error']}")
        return answer["result"]

    def take_one(self) -> None:  # wait for one message: a response, or a notification
        if (message := self.inbox.get()) is None:
            raise RuntimeError("the daemon exited")
        if "method" in message:
            self.notified(message["method"], message["params"])
        else:
            self.answers[message["id"]] = message

    def notified(self, method: str, params: dict[str, Any]) -> None:
        if method == "claude/entry":  # the whole entry: it replaces the one with its id
            entry, was = params["entry"], self.entries.get(params["entry"]["id"], {}).get("status")
            self.entries[entry["id"]] = entry
            if entry["kind"] == "tool" and entry["status"] in DONE and was not in DONE:
                print(f"\n[{entry['name']}: {entry['status']}]", flush=True)
        elif method == "claude/delta" and params["kind"] == "text":  # grows entry `entryId`
            if entry := self.entries.get(params.get("entryId", "")):
                entry["text"] += params["text"]
            print(params["text"], end="", flush=True)
        elif method == "claude/permissionRequest" and "autoDecision" not in params:
            print(f"\n? {params['toolName']} {params.get('description', '')}: allow", flush=True)
            answer = {"requestId": params["requestId"], "decision": "allow"}
            self.request("claude/respondPermission", {"channelId": params["channelId"], **answer})
        elif method == "claude/turnEnded":
            self.ended = params
            print(f"\n[turn ended: {params['outcome']}, ${params['costUsd']:.4f}]", flush=True)


def main(folder: str, prompt: str) -> int:
    client = Client()
    try:
        options = {"clientName": "minimal", "warmPool": {"size": 0}, "protocol": {"version": 1}}
        client.request("initialize", {"capabilities": {}, "initializationOptions": options})
        chat = {"channelId": client.request("claude/newChannel", {"cwd": folder})["channelId"]}
        client.request("claude/sendMessage", {**chat, "text": prompt})
        while not client.ended:
            try:
                client.take_one()
            except KeyboardInterrupt:  # stop the turn: it ends as `interrupted`
                client.request("claude/interrupt", chat)
        client.request("claude/closeChannel", chat)
        client.request("shutdown")
        client.send({"method": "exit"})
    except RuntimeError as e:  # a request failed: e names the error's code and data.name
        print(f"error: {e}", file=sys.stderr)
    finally:  # after an error too: at the end of its input the daemon closes its chats, exits
        client.stdin.close()
        client.daemon.wait()
    return 0 if client.ended.get("outcome") == "success" and client.daemon.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
