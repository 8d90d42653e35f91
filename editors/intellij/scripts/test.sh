#!/usr/bin/env bash
# The IntelliJ client's tests (core and ui, against the real daemon, CLI and stand-in model, and
# the standalone app's jar, built here and started with `java -jar`):
# Maven's own output, then one summary line. Exits non-zero on failure.
# With CI=true a missing prerequisite (java, mvn, the daemon's venv) fails; otherwise it skips.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"

suite="Kotlin client"
# shellcheck source=maven.sh
source "$here/scripts/maven.sh"
command -v python3 >/dev/null || missing "python3 is not installed (the protocol drift check runs it)"
[[ -x "${CLAUDE_SIDECAR_BIN:-$repo/.venv/bin/claude-sidecar}" ]] \
  || missing "the daemon is missing: run \`uv sync\` in $repo"

# The ui tests paint real Swing windows: without a display they run under Xvfb (Debian `xvfb`).
run=()
if [[ -z "${DISPLAY:-}" ]]; then
  if ! command -v xvfb-run >/dev/null; then
    echo "Kotlin client: installing xvfb (apt-get)" >&2
    # tests/apt-install.sh: sudo when not root; waits for another install of Debian packages.
    bash "$repo/tests/apt-install.sh" xvfb >&2 \
      || missing "xvfb-run is not installed and apt-get could not install it (Debian package xvfb)"
  fi
  run=(xvfb-run -a)
fi

cd "$here"
rm -rf "$here"/*/target/{surefire,failsafe}-reports  # the summary counts this run only
# `verify`: the unit and in-process ui tests (surefire, `test`), then `package` builds the
# standalone app's jar (ui/target/app/claude-sidecar-ui-VERSION.jar), which the *IT tests
# (failsafe) start with `java -jar`.
# Maven's colour codes leak through -B with the Kotlin plugin: strip them.
${run[@]+"${run[@]}"} mvn -q -B -Dstyle.color=never "$test_jvm" verify "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
status=${PIPESTATUS[0]}

tests=0 failures=0
for report in "$here"/*/target/{surefire,failsafe}-reports/TEST-*.xml; do
  [[ -f "$report" ]] || continue
  line="$(grep -m1 -o '<testsuite [^>]*>' "$report")"
  attr() { sed -nE "s/.* $1=\"([0-9]+)\".*/\1/p" <<<"$line"; }
  tests=$((tests + $(attr tests)))
  failures=$((failures + $(attr failures) + $(attr errors)))
done
echo "Kotlin client: $tests tests, $failures failures"
if [[ $status -ne 0 && $failures -eq 0 ]]; then
  echo "Kotlin client: the build failed (see Maven's output above)" >&2
fi
exit $status
