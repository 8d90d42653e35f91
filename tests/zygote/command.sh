# Sourced by tests/run-all.sh and tests/cross-release.sh. `fork_server PYTHON` starts the fork
# server (server.py) under PYTHON, which preloads the claude_sidecar that PYTHON imports (this
# checkout's, or a release's), and sets fork_server_bin to its stand-in for the `claude-sidecar`
# console script: each daemon or stand-in model the editor suites start through it is forked
# from a process that has imported everything, where the console script costs ~0.4 s of CPU
# importing at each start. The server runs as long as the shell that sourced this file (its
# stdin closes with it). fork_server_bin stays empty when it did not start.
fork_server() { # PYTHON
    local dir
    fork_server_bin=
    dir=$(mktemp -d /tmp/zygote-XXXXXX) || return 1
    exec {fork_server_stdin}> >(exec "$1" "$(dirname "${BASH_SOURCE[0]}")/server.py" --in "$dir" >/dev/null)
    for _ in $(seq 600); do # up to a minute: its imports, on a loaded machine
        [[ -x $dir/claude-sidecar ]] && { fork_server_bin=$dir/claude-sidecar; return 0; }
        sleep 0.1
    done
    echo "the fork server did not start: the daemons start directly" >&2
}
# `fork_server_stop`: closes the server's stdin here, so that it ends once the subshells that
# hold it have (bash's `wait` without arguments waits for a process substitution too).
fork_server_stop() {
    [[ -z ${fork_server_stdin:-} ]] || exec {fork_server_stdin}>&-
    fork_server_stdin=
}
# `with_fork_server COMMAND...`: COMMAND with CLAUDE_SIDECAR_BIN naming the stand-in (both
# editor harnesses read it), or as it is when there is none.
with_fork_server() {
    if [[ -n ${fork_server_bin:-} ]]; then CLAUDE_SIDECAR_BIN=$fork_server_bin "$@"; else "$@"; fi
}
