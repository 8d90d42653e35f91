#!/usr/bin/env bash
# The VS Code client's static checks: npm run lint (ESLint with typescript-eslint's
# type-checked rules, prettier --check, madge --circular) and npm run typecheck (tsc on the
# host, webview and test projects). Runs npm ci first when node_modules is missing or older
# than package-lock.json (not when it is a link to another checkout's). Prints a one-line
# summary; exits non-zero when a check failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ -L node_modules ]]; then
    # Another checkout's packages (a git worktree sharing main's): npm ci would empty that
    # checkout's node_modules through the link, so it is left as it is.
    [[ ! package-lock.json -nt node_modules/.package-lock.json ]] ||
        echo "note: node_modules is a link to $(readlink -f node_modules), not reinstalled here" \
            "although package-lock.json is newer: run npm ci there if its packages changed"
elif [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund --loglevel=error || {
        echo "TypeScript checks: FAIL (npm ci)"
        exit 1
    }
fi

failed=()
npm run --silent lint || failed+=("lint")
npm run --silent typecheck || failed+=("typecheck")

if ((${#failed[@]})); then
    echo "TypeScript checks: FAIL (${failed[*]})"
    exit 1
fi
echo "TypeScript checks: all passed (eslint, prettier --check, madge --circular, tsc on 4 projects)"
