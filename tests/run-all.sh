#!/usr/bin/env bash
# Every test suite of the project, each printing its own summary: the four languages'
# checks (linters, formatters, type checks), Python and Neovim (pytest), the same against an
# older Claude Code CLI (compatibility), the VS Code client (node), the Kotlin client (Maven),
# and this checkout against the last release, both ways (tests/cross-release.sh);
# in three lanes side by side (see the end of this file). Installs what each needs (npm
# packages, the older CLI, acpx on Node 22 (tests/acp/toolchain.sh), code-server, Chromium,
# luacheck, StyLua, Xvfb, sshd); with CI=true a missing prerequisite fails. The installs that
# take long on a fresh machine start at once, beside the suites (see "Installs at the start").
# Exits non-zero when any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."

# uv runs every Python step: the one on PATH, else the one bootstrap.py gets (as the README's
# first command does; it writes nothing into the system's Python).
if ! command -v uv >/dev/null 2>&1; then
    uv_path=$(python3 bootstrap.py --uv) || { echo "FAIL: no uv (bootstrap.py, above)"; exit 1; }
    PATH="$(dirname "$uv_path"):$PATH"
    export PATH
fi

summary=()
failed=()
status=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=()
notes=()
keys=()
declare -A number

# Every suite runs into its own log ($logs/<n>.log; its exit code and seconds go to
# $logs/<n>.rc when it ends); print_suites prints the logs whole, in the order the suites
# were declared, each as soon as it and every suite declared before it have ended.
declare_suite() { # KEY NAME NOTE: NOTE goes into the summary line, after the seconds
    number[$1]=${#names[@]}
    keys+=("$1")
    names+=("$2")
    notes+=("$3")
}
run_suite() { # KEY COMMAND...
    local n=${number[$1]}
    shift
    local start=$SECONDS rc TIMEFORMAT='%1U %1S'
    # The CPU time of the suite's processes (user, system; those it waited for), beside its
    # wall time: the lanes share two cores, so CPU time says what a suite costs the others.
    { time "$@" >"$logs/$n.log" 2>&1; } 2>"$logs/$n.cpu"
    rc=$?
    echo "$rc $((SECONDS - start))" >"$logs/$n.rc.tmp"
    mv "$logs/$n.rc.tmp" "$logs/$n.rc"
}
print_suites() {
    local n rc seconds note cpu
    print_early apt "Debian packages for the suites (tests/apt-install.sh, at the start)"
    for ((n = 0; n < ${#names[@]}; n++)); do
        until [[ -f $logs/$n.rc ]]; do
            # A lane that ended (killed) without running this suite would leave no .rc.
            if [[ -z $(jobs -rp) && ! -f $logs/$n.rc ]]; then
                echo "127 0" >"$logs/$n.rc"
                echo "(this suite did not run: its lane ended before it)" >>"$logs/$n.log"
                break
            fi
            sleep 1
        done
        echo
        echo "##### ${names[n]}"
        print_early "${keys[n]}"
        cat "$logs/$n.log" 2>/dev/null
        read -r rc seconds <"$logs/$n.rc"
        cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$logs/$n.cpu" 2>/dev/null)
        note=", ${cpu:-?} s CPU${notes[n]:+, ${notes[n]}}"
        if [[ $rc == 0 ]]; then
            summary+=("PASS  ${names[n]} ($seconds s$note)")
        else
            summary+=("FAIL  ${names[n]} ($seconds s$note)")
            failed+=("$n")
            status=1
        fi
    done
}

# ---- Installs at the start -------------------------------------------------------------------
# On a fresh machine the installs took minutes (code-server with its npm dependencies, Chromium,
# the older CLI), each at the start of the suite that needs it. They start at once instead, in
# the background, beside the suites that do not need them: `early KEY COMMAND...` runs COMMAND
# now, into $logs/early-KEY.log. The suite that needs it runs the same install again when it
# starts; each install holds a lock (flock), so that run waits for this one, then finds it done.
# A suite's section shows its early install's output (nothing when everything was installed),
# before its own; a failed early install leaves the suite's own install to fail, or skip, as it
# would have.
early() { # KEY COMMAND...
    local key=$1
    shift
    (
        start=$SECONDS
        "$@" >"$logs/early-$key.log" 2>&1
        echo "$? $((SECONDS - start))" >"$logs/early-$key.rc.tmp"
        mv "$logs/early-$key.rc.tmp" "$logs/early-$key.rc"
    ) &
}
print_early() { # KEY [HEADING]: wait for early KEY's end (if one ran) and print its output
    local key=$1 rc seconds
    [[ -f $logs/early-$key.log ]] || return 0
    until [[ -f $logs/early-$key.rc ]]; do sleep 1; done
    [[ -s $logs/early-$key.log ]] || return 0
    read -r rc seconds <"$logs/early-$key.rc"
    [[ -n ${2:-} ]] && { echo; echo "##### $2"; }
    echo "(installed at the start, beside the suites: $seconds s, exit $rc)"
    cat "$logs/early-$key.log"
}

# Debian packages, one apt-get install (tests/apt-install.sh), for what Python's ssh tests
# (tests/daemon/sshd.sh: openssh-server), the Lua checks (lua-check) and the Kotlin client's UI
# tests without a display (xvfb) install when missing, with their own checks (each through
# tests/apt-install.sh, which waits for this one). Chromium comes with the
# VS Code toolchain (below, without apt's recommended packages, as that script installs it).
debian_packages() {
    local packages=()
    command -v sshd >/dev/null || [[ -x /usr/sbin/sshd ]] || packages+=(openssh-server)
    command -v luacheck >/dev/null || packages+=(lua-check)
    [[ -n ${DISPLAY:-} ]] || command -v xvfb-run >/dev/null || packages+=(xvfb)
    ((${#packages[@]} == 0)) || bash tests/apt-install.sh --no-prompt "${packages[@]}"
}
early apt debian_packages
# Node 24, code-server and Chromium (editors/vscode/scripts/toolchain.sh); the VS Code suite
# runs it again, which prints what it found.
early vscode bash -c 'bash editors/vscode/scripts/toolchain.sh >/dev/null'

# Each suite runs in a subshell: its `cd` stays its own.

# The compatibility run: the real-CLI tests (Neovim included) against the older CLI whose
# version claude_sidecar/cli/compat.py names (COMPAT_CLI_VERSION), installed from npm into
# .cache/cli/<version> (git-ignored, kept: later runs skip the install).
# The native binary of this platform's package (claude-code-linux-x64, -darwin-arm64, ...).
compat_binary() { compgen -G ".cache/cli/$1/node_modules/@anthropic-ai/claude-code-*/claude" | head -n 1; }
compat_installed() { [[ -n $(compat_binary "$1") ]] && "$(compat_binary "$1")" --version 2>/dev/null | grep -q "^$1 "; }
compat_install() ( # VERSION: installs it unless installed; concurrent calls wait for each other
    version=$1
    dir=.cache/cli/$version
    mkdir -p "$dir" && exec 9>"$dir.lock" && flock 9
    compat_installed "$version" && exit 0
    echo "installing @anthropic-ai/claude-code@$version into $dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$version"
    compat_installed "$version"
)
compat_suite() (
    version=$1
    [[ -n $version ]] || { echo "FAIL: no CLI version from claude_sidecar/cli/compat.py"; exit 1; }
    if ! compat_install "$version"; then
        if [[ ${CI:-} == true ]]; then
            echo "FAIL: Claude Code CLI $version could not be installed from npm"
            exit 1
        fi
        echo "SKIP: Claude Code CLI $version could not be installed from npm (it needs npm" \
            "and the registry; with CI=true this fails)"
        exit 0
    fi
    # tests/install builds and installs the project as users do: nothing there differs by CLI.
    SIDECAR_TEST_CLI=$PWD/$(compat_binary "$version") uv run pytest --ignore=tests/install
)
# The TypeScript checks suite (before it) has run `npm ci` when node_modules was missing or
# stale, and tsc on every project: npm test leaves its own typecheck step out.
vscode_suite() (
    cd editors/vscode &&
        { [[ -L node_modules ]] || # another checkout's (lint.sh says why it is left alone)
            [[ -d node_modules && ! package-lock.json -nt node_modules/.package-lock.json ]] ||
            npm ci --no-audit --no-fund --loglevel=error; } &&
        bash scripts/toolchain.sh &&
        with_fork_server npm test --silent -- --skip=typecheck
)

kotlin_suite() (
    with_fork_server bash editors/intellij/scripts/test.sh
)

static_checks() (
    uv run ruff check claude_sidecar tests bench editors/intellij/scripts release bootstrap.py docs/examples &&
        uv run ruff format --check claude_sidecar tests bench editors/intellij/scripts release bootstrap.py docs/examples &&
        uv run mypy &&
        uv run lint-imports
)

lua_checks() { bash editors/nvim/scripts/lint.sh; }
typescript_checks() { bash editors/vscode/scripts/lint.sh; }
kotlin_checks() { bash editors/intellij/scripts/lint.sh; }

# Python writes no bytecode cache when PYTHONDONTWRITEBYTECODE is set (as on this project's
# machines), and then compiles every module it imports at each start: the suites start a
# Python daemon (pygls, lsprotocol, msgspec) for most tests, and each paid ~0.5 s of CPU of
# its ~1.6 s start-up for that. Compile the venv's packages and the sources once instead
# (a later run compiles only what changed; a stale .pyc is never used: Python checks it
# against its source).
uv run --quiet python -m compileall -q -j 0 claude_sidecar tests bench \
    "$(uv run --quiet python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" ||
    echo "compileall failed: the suites run, with Python compiling as it imports"

# The daemon starts its CLIs at nice 10, below the editor (claude_sidecar/cli/priority.py).
# Here every process is a test: a CLI below the other lanes' work waited behind it, and the
# VS Code extension tests, whose CLIs then got a tenth of a busy core's share, went past
# their 300 s (ci45). The editor suites' daemons (and the last release's, which ignores it)
# start theirs at the daemon's own priority; the Python suite's daemons do not see this
# variable (tests/env.py isolated_env) and run as users run, as tests/test_cli_priority.py
# checks.
export CLAUDE_SIDECAR_CLI_NICE=0

# The editor suites' daemons and stand-in models start through a fork server (tests/zygote),
# as pytest's do. The UI runs and the cross-release runs' this-checkout daemons start as
# users start them.
source tests/zygote/command.sh
fork_server .venv/bin/python

compat_cli=$(uv run --quiet python -m claude_sidecar.cli.compat)
# The older CLI, and acpx on Node 22 for the Python suite's ACP test (tests/acp/toolchain.sh).
[[ -z $compat_cli ]] || early compat compat_install "$compat_cli"
early pytest bash -c 'bash tests/acp/toolchain.sh acpx >/dev/null'

# Three lanes side by side, each running its suites one after the other:
#  - the Python suites (pytest, then the compatibility run), CPU-bound: they keep both
#    cores busy when the others wait;
#  - the four languages' checks (side by side: they only read the sources), then two lanes:
#    the VS Code suite, then this checkout's VS Code client against the last release's
#    daemon (its core tests again, on what the suite installed and built: after it, as both
#    build into editors/vscode); and the Kotlin suite, then the Kotlin and Neovim clients
#    against that daemon, then the release's own clients and requests against this daemon
#    (tests/cross-release.sh). The editor suites wait much of their time on their UIs
#    (code-server and Chromium, Swing): ci9 measured the VS Code suite at 161 s of CPU in
#    442 s, Kotlin's at 112 s in 210 s; one after the other they were the longest lane.
# No two suites share a port, socket, HOME or build directory, and every test holds under
# this load (order and overlap are proven through the stand-in model, never by timing).
declare_suite python-checks "Python static checks (ruff check, ruff format, mypy --strict, lint-imports)" \
    "beside the other checks"
declare_suite lua-checks "Lua checks (luacheck, stylua)" "beside the other checks"
declare_suite typescript-checks "TypeScript checks (eslint, prettier, tsc)" "beside the other checks"
declare_suite kotlin-checks "Kotlin checks (ktlint, warnings as errors, package cycles)" "beside the other checks"
declare_suite pytest "Python and Neovim (uv run pytest)" "beside the checks and editor suites"
declare_suite compat "Python against Claude Code CLI $compat_cli (compatibility)" \
    "beside the editor suites"
declare_suite vscode "VS Code client (editors/vscode: npm test)" "beside the Python and Kotlin suites"
declare_suite kotlin "Kotlin client (editors/intellij: mvn test)" "beside the Python and VS Code suites"
declare_suite cross-release-vscode "Cross-release: this checkout's VS Code client against the last release's daemon" \
    "beside the other suites"
declare_suite cross-release "Cross-release: this checkout's Kotlin and Neovim clients against the last release's daemon" \
    "beside the other suites"
declare_suite cross-release-back "Cross-release: the last release's clients and requests against this daemon" \
    "beside the other suites"
echo "The suites run in three lanes side by side (Python; the checks, then VS Code; the checks,"
echo "then Kotlin); each suite's output follows whole, in this order, once it has ended."
(
    run_suite pytest uv run pytest
    run_suite compat compat_suite "$compat_cli"
) &
(
    run_suite python-checks static_checks &
    run_suite lua-checks lua_checks &
    run_suite typescript-checks typescript_checks &
    run_suite kotlin-checks kotlin_checks &
    wait
    (
        run_suite vscode vscode_suite
        run_suite cross-release-vscode bash tests/cross-release.sh vscode
    ) &
    (
        run_suite kotlin kotlin_suite
        run_suite cross-release bash tests/cross-release.sh protocol kotlin clients
        run_suite cross-release-back bash tests/cross-release.sh release
    ) &
    wait
) &
print_suites
fork_server_stop
wait

echo
echo "##### all suites"
printf '%s\n' "${summary[@]}"
# Where a run's output is read from its end (CI shows its last part), the lines that say why a
# suite failed come last, not only in the middle of its log above.
for n in "${failed[@]}"; do
    echo
    echo "##### why it failed: ${names[n]} (its failure lines; the whole log is above)"
    grep -a -E -m 40 '^(not ok|FAIL|FAILED|ERROR|E   )|\[ERROR\]|✖|AssertionError|Error:|Timeout|timed out' \
        "$logs/$n.log" | cut -c 1-400
done
exit $status
