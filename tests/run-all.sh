#!/usr/bin/env bash
# Every test suite of the project, one after the other, each printing its own summary:
# the Neovim client's Lua checks (luacheck, stylua), Python and Neovim (pytest), the same
# against an older Claude Code CLI (compatibility), the VS Code client (node), the Kotlin
# client (Maven). Installs what each needs (npm packages, the older CLI, acpx on Node 22
# (tests/acp/toolchain.sh), code-server, Chromium, luacheck, StyLua); with CI=true a missing
# prerequisite fails.
# Exits non-zero when any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."

summary=()
status=0
suite() {
    local name=$1
    shift
    echo
    echo "##### $name"
    local start=$SECONDS
    if "$@"; then
        summary+=("PASS  $name ($((SECONDS - start)) s)")
    else
        summary+=("FAIL  $name ($((SECONDS - start)) s)")
        status=1
    fi
}

# Suites that only read the sources and need no shared resource (the linters and type
# checks) run side by side: started together, each into its own log, printed whole and
# in order once all have ended, with the same summary lines as the others.
concurrent_suites() {
    local logs
    logs=$(mktemp -d)
    local names=() i=0
    while (($#)); do
        local name=$1 command=$2
        shift 2
        names+=("$name")
        (
            start=$SECONDS
            $command >"$logs/$i.log" 2>&1
            echo "$? $((SECONDS - start))" >"$logs/$i.rc"
        ) &
        i=$((i + 1))
    done
    wait
    for ((i = 0; i < ${#names[@]}; i++)); do
        echo
        echo "##### ${names[i]}"
        cat "$logs/$i.log"
        local rc seconds
        read -r rc seconds <"$logs/$i.rc"
        if [[ $rc == 0 ]]; then
            summary+=("PASS  ${names[i]} ($seconds s, beside the other checks)")
        else
            summary+=("FAIL  ${names[i]} ($seconds s, beside the other checks)")
            status=1
        fi
    done
    rm -rf "$logs"
}

# Each suite runs in a subshell: its `cd` stays its own.

# The compatibility run: the real-CLI tests (Neovim included) against the older CLI whose
# version claude_sidecar/compat.py names (COMPAT_CLI_VERSION), installed from npm into
# .cache/cli/<version> (git-ignored, kept: later runs skip the install).
compat_suite() (
    version=$1
    [[ -n $version ]] || { echo "FAIL: no CLI version from claude_sidecar/compat.py"; exit 1; }
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
    uv run ruff check claude_sidecar tests bench &&
        uv run ruff format --check claude_sidecar tests bench &&
        uv run mypy
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

concurrent_suites \
    "Python static checks (ruff check, ruff format, mypy --strict)" static_checks \
    "Lua checks (luacheck, stylua)" lua_checks \
    "TypeScript checks (eslint, prettier, tsc)" typescript_checks \
    "Kotlin checks (ktlint, warnings as errors)" kotlin_checks
suite "Python and Neovim (uv run pytest)" uv run pytest
compat_cli=$(uv run --quiet python -m claude_sidecar.compat)
suite "Python against Claude Code CLI $compat_cli (compatibility)" compat_suite "$compat_cli"
suite "VS Code client (editors/vscode: npm test)" vscode_suite
suite "Kotlin client (editors/intellij: mvn test)" kotlin_suite

echo
echo "##### all suites"
printf '%s\n' "${summary[@]}"
exit $status
