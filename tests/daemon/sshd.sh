#!/usr/bin/env bash
# Prints the path of sshd (Debian's openssh-server), installing it the first time through
# tests/apt-install.sh (as root, or with sudo -n; it waits for another install of Debian
# packages, such as tests/run-all.sh's at its start). Exits non-zero, saying why, when it cannot.
set -euo pipefail
for candidate in "$(command -v sshd || true)" /usr/sbin/sshd; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
        echo "$candidate"
        exit 0
    fi
done
echo "installing openssh-server (apt-get)" >&2
bash "$(dirname "$0")/../apt-install.sh" --no-prompt openssh-server >&2 \
    || { echo "apt-get could not install openssh-server (Debian package openssh-server)" >&2; exit 1; }
echo /usr/sbin/sshd
