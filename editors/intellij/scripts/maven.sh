# Sourced by lint.sh, test.sh and tests/cross-release.sh: `missing REASON`, the Maven
# toolchain check and `test_jvm`. Set `suite` (the name in their summary lines) before
# sourcing. With CI=true a missing prerequisite fails the script; otherwise it is skipped.

# The tests' JVMs (surefire's forks), as Maven and the Kotlin compile daemon (.mvn/jvm.config):
# C1 only and the serial collector. Each lives a minute or two, where C2's compiles and a
# parallel collector's threads cost more CPU than they save on two cores (the Kotlin suite:
# 310 s of CPU before, 181 s after; its checks 153 s, 61 s). The benches run mvn without it,
# on the JVM's defaults, as users' IDEs run.
test_jvm="-DargLine=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

missing() {
  if [[ "${CI:-}" == "true" ]]; then
    echo "$suite: FAILED: $1" >&2
    exit 1
  fi
  echo "$suite: SKIP: $1" >&2
  exit 0
}
command -v java >/dev/null || missing "java is not installed (OpenJDK 17+)"
command -v mvn >/dev/null || missing "mvn is not installed (Maven 3.8+)"
