#!/usr/bin/env bash
# Builds the standalone app as one runnable jar (no tests run) and copies it into OUTDIR:
#   editors/intellij/scripts/app-jar.sh OUTDIR
# prints the copy's path, alone on stdout (Maven's output goes to stderr). The release
# tooling calls it; `java -jar OUTDIR/claude-sidecar-ui-VERSION.jar` starts the app.
# Needs java (OpenJDK 17+) and mvn; exits non-zero when either is missing or the build fails.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "app-jar: $tool is not installed (OpenJDK 17+ and Maven 3.8+)" >&2; exit 1; }
done
mkdir -p "$1"
out="$(cd "$1" && pwd)"

cd "$here"
# ui/target/app holds this build's jar only (an older version's would be ambiguous).
rm -rf ui/target/app
# The whole reactor: ui needs core's jars. -DskipTests still compiles the tests (ui's test
# classes use core's test jar, which `package` builds); none runs.
mvn -q -B -Dstyle.color=never -DskipTests package >&2
jars=(ui/target/app/claude-sidecar-ui-*.jar)
if [[ ${#jars[@]} -ne 1 || ! -f "${jars[0]}" ]]; then
  echo "app-jar: expected one jar in ui/target/app, found: ${jars[*]}" >&2
  exit 1
fi
cp "${jars[0]}" "$out/"
echo "$out/$(basename "${jars[0]}")"
