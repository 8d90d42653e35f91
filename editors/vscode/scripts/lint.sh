#!/usr/bin/env bash
# The VS Code client's static checks: npm run lint (ESLint with typescript-eslint's
# type-checked rules, prettier --check, madge --circular) and npm run typecheck (tsc on the
# host, webview and test projects). Runs npm ci first when node_modules is missing or older
# than package-lock.json. Prints a one-line summary; exits non-zero when a check failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
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
