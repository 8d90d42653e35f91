#!/usr/bin/env bash
# Installs the Debian packages named that are not installed yet, in one `apt-get install`
# (sudo when not root; `apt-get update` and a second try when the install fails, as on a fresh
# machine whose package lists are empty or stale). Used by the suites' install scripts
# (editors/nvim/scripts/lint.sh, editors/vscode/scripts/toolchain.sh,
# editors/intellij/scripts/test.sh) and by tests/run-all.sh, which installs every suite's
# packages at its start.
#   tests/apt-install.sh [--no-prompt] [--no-recommends] PACKAGE...
# --no-prompt: `sudo -n` (fails rather than asking for a password; for installs in the background).
# --no-recommends: apt-get's --no-install-recommends.
# Calls wait for each other (a machine-wide lock, $TMPDIR/claude-sidecar-apt.lock): apt-get
# fails at once, without waiting, when another apt-get holds dpkg's lock. apt-get's output goes
# to stderr. Exits 0 when every package is installed; otherwise non-zero, saying why (the
# caller decides whether that skips or fails).
set -uo pipefail

prompt=1 options=()
while [[ ${1:-} == --* ]]; do
    case $1 in
        --no-prompt) prompt=0 ;;
        --no-recommends) options+=(--no-install-recommends) ;;
        *) echo "tests/apt-install.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
(($#)) || { echo "usage: tests/apt-install.sh [--no-prompt] [--no-recommends] PACKAGE..." >&2; exit 2; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing() {
    local p
    todo=()
    for p in "$@"; do installed "$p" || todo+=("$p"); done
    ((${#todo[@]}))
}
# Installed already: no lock, no apt-get (a later run starts at once).
missing "$@" || exit 0

command -v apt-get >/dev/null || { echo "apt-get is missing: cannot install Debian ${todo[*]}" >&2; exit 1; }
sudo=()
if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { echo "not root and no sudo: cannot apt-get install ${todo[*]}" >&2; exit 1; }
    if ((prompt)); then sudo=(sudo); else sudo=(sudo -n); fi
fi

exec 9>"${TMPDIR:-/tmp}/claude-sidecar-apt.lock"
flock 9
# Another call may have installed them while this one waited.
missing "$@" || exit 0

export DEBIAN_FRONTEND=noninteractive
# Wait for dpkg's lock (another program's apt-get) instead of failing at once.
apt=("${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300)
echo "apt-get install ${todo[*]}" >&2
"${apt[@]}" install -y -q ${options[@]+"${options[@]}"} "${todo[@]}" >&2 && exit 0
echo "apt-get install failed; apt-get update, then again" >&2
"${apt[@]}" update -q >&2 || { echo "apt-get update failed" >&2; exit 1; }
"${apt[@]}" install -y -q ${options[@]+"${options[@]}"} "${todo[@]}" >&2 ||
    { echo "apt-get install ${todo[*]} failed" >&2; exit 1; }
