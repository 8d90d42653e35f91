# Sourced by lint.sh and test.sh: `missing REASON` and the Maven toolchain check.
# Set `suite` (the name in their summary lines) before sourcing. With CI=true a missing
# prerequisite fails the script; otherwise it is skipped.

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
