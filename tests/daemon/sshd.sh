#!/usr/bin/env bash
# Prints the path of sshd (Debian's openssh-server), installing it with apt-get the first
# time (as root, or with sudo). Exits non-zero, saying why, when it cannot.
set -euo pipefail
for candidate in "$(command -v sshd || true)" /usr/sbin/sshd; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
        echo "$candidate"
        exit 0
    fi
done
command -v apt-get >/dev/null || { echo "sshd is missing and there is no apt-get (Debian package openssh-server)" >&2; exit 1; }
sudo=()
if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { echo "sshd is missing and apt-get needs root or sudo (Debian package openssh-server)" >&2; exit 1; }
    sudo=(sudo -n)
fi
echo "installing openssh-server (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get install -y -q openssh-server >&2 \
    || { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" apt-get install -y -q openssh-server >&2; } \
    || { echo "apt-get could not install openssh-server" >&2; exit 1; }
echo /usr/sbin/sshd
