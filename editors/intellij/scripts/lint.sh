#!/usr/bin/env bash
# The IntelliJ client's static checks, through Maven: ktlint (Spotless, style in ../.editorconfig)
# on the Kotlin sources of core, ui and plugin (which Maven does not build; ktlint reads
# sources without compiling them), a compile of core and ui with Kotlin warnings as
# errors (-Werror), and the package check (core's PackageCyclesTest, with PackageGraphTest
# for the check itself: the packages of core, ui and plugin use each other without a cycle,
# core uses neither ui nor plugin, ui not plugin; it reads the sources, the plugin's too).
# No other test runs. Maven's output on failure, then one summary line.
# Exits non-zero on failure; `mvn spotless:apply` in editors/intellij fixes the formatting.
# With CI=true a missing prerequisite (java, mvn) fails; otherwise it skips.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

suite="Kotlin checks"
# shellcheck source=maven.sh
source "$here/scripts/maven.sh"

cd "$here"
files=$(find core/src ui/src plugin/src plugin/*.gradle.kts -name '*.kt' -o -name '*.kts' | wc -l)
# Maven's colour codes leak through -B with the Kotlin plugin: strip them.
# The package check is two JUnit classes of core: only they run (ui has none of them).
mvn -q -B -Dstyle.color=never "$test_jvm" test -Dtest='PackageCyclesTest,PackageGraphTest' -Dsurefire.failIfNoSpecifiedTests=false \
  spotless:check "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
status=${PIPESTATUS[0]}
if [[ $status -eq 0 ]]; then
  echo "Kotlin checks: passed: ktlint on $files files, core and ui compiled without warnings," \
    "no package cycle in core, ui and plugin, each module using only those below it"
else
  echo "Kotlin checks: FAILED: ktlint, the compiler (warnings are errors) or the package check" \
    "(PackageCyclesTest: a cycle, or a module using one above it) found problems, see above;" \
    "\`mvn spotless:apply\` in editors/intellij fixes the formatting" >&2
fi
exit $status
