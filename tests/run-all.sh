#!/usr/bin/env bash
# Every test suite of the project, each printing its own summary: the four languages'
# checks (linters, formatters, type checks), Python and Neovim (pytest), the same against an
# older Claude Code CLI (compatibility), the VS Code client (node), the Kotlin client (Maven);
# in two lanes side by side (see the end of this file). Installs what each needs (npm
# packages, the older CLI, acpx on Node 22 (tests/acp/toolchain.sh), code-server, Chromium,
# luacheck, StyLua); with CI=true a missing prerequisite fails.
# Exits non-zero when any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."

summary=()
status=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=()
notes=()
declare -A number

# Every suite runs into its own log ($logs/<n>.log; its exit code and seconds go to
# $logs/<n>.rc when it ends); print_suites prints the logs whole, in the order the suites
# were declared, each as soon as it and every suite declared before it have ended.
declare_suite() { # KEY NAME NOTE: NOTE goes into the summary line, after the seconds
    number[$1]=${#names[@]}
    names+=("$2")
    notes+=("$3")
}
run_suite() { # KEY COMMAND...
    local n=${number[$1]}
    shift
    local start=$SECONDS
    "$@" >"$logs/$n.log" 2>&1
    echo "$? $((SECONDS - start))" >"$logs/$n.rc.tmp"
    mv "$logs/$n.rc.tmp" "$logs/$n.rc"
}
print_suites() {
    local n rc seconds note
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
        cat "$logs/$n.log" 2>/dev/null
        read -r rc seconds <"$logs/$n.rc"
        note=${notes[n]:+, ${notes[n]}}
        if [[ $rc == 0 ]]; then
            summary+=("PASS  ${names[n]} ($seconds s$note)")
        else
            summary+=("FAIL  ${names[n]} ($seconds s$note)")
            status=1
        fi
    done
}

# Each suite runs in a subshell: its `cd` stays its own.

# The compatibility run: the real-CLI tests (Neovim included) against the older CLI whose
# version claude_sidecar/cli/compat.py names (COMPAT_CLI_VERSION), installed from npm into
# .cache/cli/<version> (git-ignored, kept: later runs skip the install).
compat_suite() (
    version=$1
    [[ -n $version ]] || { echo "FAIL: no CLI version from claude_sidecar/cli/compat.py"; exit 1; }
    dir=.cache/cli/$version
    # The native binary of this platform's package (claude-code-linux-x64, -darwin-arm64, ...).
    binary() { compgen -G "$dir/node_modules/@anthropic-ai/claude-code-*/claude" | head -n 1; }
    installed() { [[ -n $(binary) ]] && "$(binary)" --version 2>/dev/null | grep -q "^$version "; }
    if ! installed; then
        echo "installing @anthropic-ai/claude-code@$version into $dir"
        mkdir -p "$dir" &&
            npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
                "@anthropic-ai/claude-code@$version"
        if ! installed; then
            if [[ ${CI:-} == true ]]; then
                echo "FAIL: Claude Code CLI $version could not be installed from npm"
                exit 1
            fi
            echo "SKIP: Claude Code CLI $version could not be installed from npm (it needs npm" \
                "and the registry; with CI=true this fails)"
            exit 0
        fi
    fi
    SIDECAR_TEST_CLI=$PWD/$(binary) uv run pytest
)
# The TypeScript checks suite (before it) has run `npm ci` when node_modules was missing or
# stale, and tsc on every project: npm test leaves its own typecheck step out.
vscode_suite() (
    cd editors/vscode &&
        { [[ -d node_modules && ! package-lock.json -nt node_modules/.package-lock.json ]] ||
            npm ci --no-audit --no-fund --loglevel=error; } &&
        bash scripts/toolchain.sh &&
        npm test --silent -- --skip=typecheck
)

kotlin_suite() (
    bash editors/intellij/scripts/test.sh
)

static_checks() (
    uv run ruff check claude_sidecar tests bench editors/intellij/scripts &&
        uv run ruff format --check claude_sidecar tests bench editors/intellij/scripts &&
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

compat_cli=$(uv run --quiet python -m claude_sidecar.cli.compat)

# Two lanes side by side, each running its suites one after the other:
#  - the Python suites (pytest, then the compatibility run), CPU-bound: they keep both
#    cores busy;
#  - the four languages' checks (side by side: they only read the sources), then the VS Code
#    and Kotlin suites, each after its checks (the TypeScript checks run `npm ci` and tsc,
#    the Kotlin checks compile). Those two wait much of their time on their editors' UIs
#    (code-server and Chromium, Swing): about half the VS Code suite's wall time is idle
#    CPU, which the Python suites fill.
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
declare_suite vscode "VS Code client (editors/vscode: npm test)" "beside the Python suites"
declare_suite kotlin "Kotlin client (editors/intellij: mvn test)" "beside the Python suites"
echo "The suites run in two lanes side by side (Python; the checks, then VS Code and Kotlin);"
echo "each suite's output follows whole, in this order, once it has ended."
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
    run_suite vscode vscode_suite
    run_suite kotlin kotlin_suite
) &
print_suites
wait

echo
echo "##### all suites"
printf '%s\n' "${summary[@]}"
exit $status
