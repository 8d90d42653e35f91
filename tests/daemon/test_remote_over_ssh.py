"""A remote host over SSH: the editor's daemon command is ``ssh HOST claude-sidecar
connect``. A real OpenSSH server on localhost (its own port, host key and client key,
made by the test) stands in for the remote machine; a dropped SSH connection detaches the
client, and a new one re-attaches and gets exactly what it missed.

``tests/daemon/sshd.sh`` installs Debian's openssh-server the first time. Without it the
test skips; with CI=true it fails.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, seqs
from tests.harness import Sidecar, wait_until_dead

SSHD_SH = Path(__file__).with_name("sshd.sh")
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sshd on localhost runs as root")


@dataclass
class Sshd:
    """An sshd on 127.0.0.1 that lets in one key, as root."""

    port: int
    key: Path
    process: subprocess.Popen[bytes]

    def command(self, remote: list[str]) -> tuple[str, ...]:
        """The ssh command line running ``remote`` on the "remote" host."""
        return (
            "ssh",
            "-i",
            str(self.key),
            "-p",
            str(self.port),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "BatchMode=yes",
            "root@127.0.0.1",
            shlex.join(remote),
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    found = subprocess.run(["bash", str(SSHD_SH)], capture_output=True, text=True, timeout=600)
    if found.returncode != 0:
        why = f"no sshd: {found.stderr.strip().splitlines()[-1:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(f"{why} (with CI=true this fails)")
    sshd_bin = found.stdout.strip().splitlines()[-1]
    keys = tmp_path / "ssh"
    keys.mkdir(mode=0o700)
    for name in ("host", "client"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True
        )
    (keys / "authorized_keys").write_text((keys / "client.pub").read_text())
    port = _free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPidFile {keys / 'sshd.pid'}\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    with open(keys / "sshd.log", "wb") as log:
        process = subprocess.Popen([sshd_bin, "-D", "-e", "-f", str(config)], stderr=log)
    try:
        _until_listening(port, process)
        yield Sshd(port, keys / "client", process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(200):
        assert process.poll() is None, "sshd exited at start"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            # Polls: sshd's readiness is not an event this process can await.
            time.sleep(0.05)
    raise AssertionError(f"sshd did not listen on {port}")


def remote_connect(shared: SharedDaemon) -> list[str]:
    """``claude-sidecar connect`` as the remote side runs it, in the test's environment
    (sshd gives a login environment: HOME and the model's address are set explicitly)."""
    keep = ("HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "PATH", "CLAUDE_SIDECAR_CLI")
    env = [f"{k}={shared.env[k]}" for k in keep if k in shared.env]
    env.append("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
    return [
        "env",
        *env,
        sys.executable,
        "-m",
        "claude_sidecar",
        "connect",
        "--socket",
        str(shared.socket),
    ]


async def test_a_dropped_ssh_connection_detaches_and_a_new_one_gets_what_it_missed(
    shared: SharedDaemon, sshd: Sshd, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "^long$",
                        "steps": [
                            [
                                {"text": "a" * 60},
                                {"wait_for_prompt": "^go on$", "timeout": 60},
                                {"text": "b" * 60},
                            ]
                        ],
                        "chunk": 2,
                    }
                ],
                "default": [[{"text": "ok"}]],
            }
        )
    )
    over_ssh = Sidecar(shared.env, argv=sshd.command(remote_connect(shared)))
    await over_ssh.start({"clientName": "over ssh"})
    channel = await over_ssh.new_channel(str(workspace))
    await over_ssh.send(channel, "long")
    await over_ssh.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")
    over_ssh.process.send_signal(signal.SIGKILL)  # the network drops
    await over_ssh.process.wait()
    last_seen = seqs(over_ssh, channel)[-1]

    local = await shared.client(name="local")
    await local.request("claude/attach", {"channelId": channel})
    side = await local.new_channel(str(workspace))
    await local.turn(side, "go on")
    await local.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")

    again = Sidecar(shared.env, argv=sshd.command(remote_connect(shared)))
    shared.clients.append(again)
    await again.start({"clientName": "over ssh, again"})
    attached = await again.request("claude/attach", {"channelId": channel, "afterSeq": last_seen})

    assert attached["missed"] is False
    assert seqs(again, channel) == list(range(last_seen + 1, attached["seq"] + 1))
    assert over_ssh.text(channel) + again.text(channel) == "a" * 60 + "b" * 60
    assert await wait_until_dead([over_ssh.process.pid]) == []
