#!/usr/bin/env bash
# Every test suite of the project, one after the other, each printing its own summary:
# Python and Neovim (pytest), the VS Code client (node), the Kotlin client (Maven). Installs what each needs
# (npm packages, code-server, Chromium); with CI=true a missing prerequisite fails.
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

# Each suite runs in a subshell: its `cd` stays its own.
vscode_suite() (
    cd editors/vscode &&
        npm ci --no-audit --no-fund --loglevel=error &&
        bash scripts/toolchain.sh &&
        npm test --silent
)

kotlin_suite() (
    bash editors/intellij/scripts/test.sh
)

suite "Python and Neovim (uv run pytest)" uv run pytest
suite "VS Code client (editors/vscode: npm test)" vscode_suite
suite "Kotlin client (editors/intellij: mvn test)" kotlin_suite

echo
echo "##### all suites"
printf '%s\n' "${summary[@]}"
exit $status
