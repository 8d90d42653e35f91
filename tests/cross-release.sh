#!/usr/bin/env bash
# This checkout against the last release (release/history.py: its tag, or its commit as
# release/releases.tsv records it), both ways, as users meet them: the daemon and its clients
# are installed apart, and the shared daemon keeps running across an editor's upgrade.
#  - protocol: the schema breaks no client of the release (release/schema_diff.py), unless
#    the protocol version rose;
#  - this checkout's clients against the release's daemon: the VS Code and Kotlin clients'
#    core tests (CLAUDE_SIDECAR_BIN), the Neovim plugin's and the quick start client's tests
#    marked cross_release (SIDECAR_TEST_DAEMON);
#  - the release's clients and requests against this checkout's daemon: the release's own
#    tests marked cross_release (its Neovim plugin, its quick start client, its protocol tests
#    of a chat), run from its tree.
# The release is built once into .cache/releases/<tag> (git-ignored, kept): its tree from
# `git archive` of its commit and an environment from its own uv.lock.
#
#   bash tests/cross-release.sh            every step
#   bash tests/cross-release.sh STEP...    only these (protocol vscode kotlin clients release)
#
# With CI=true a missing prerequisite (no release, no npm, java or mvn) fails; otherwise
# the step is skipped. Exits non-zero when a step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

suite="Cross-release"
missing() { # REASON
    if [[ ${CI:-} == true ]]; then
        echo "$suite: FAILED: $1"
        exit 1
    fi
    echo "$suite: SKIP: $1"
    exit 0
}

# The last release (release/history.py): its tag, or the commit release/releases.tsv records
# (a pushed branch carries no tags, nor does a clone of it). A shallow clone fetches the
# history down to it from origin first.
if [[ $(git rev-parse --is-shallow-repository) == true ]]; then
    git fetch --quiet --unshallow --tags origin ||
        echo "$suite: this clone is shallow and could not fetch its history from origin"
fi
this_daemon=$repo/.venv/bin/claude-sidecar
[[ -x $this_daemon ]] || uv sync --frozen --quiet || exit 1
last=$(uv run --frozen python -m release last) && read -r tag commit <<<"$last" ||
    missing "no last release found (the git history: $(git rev-list --count HEAD) commits, shallow: $(git rev-parse --is-shallow-repository))"

# The release, built into a scratch environment once: its tree and its locked dependencies,
# the dev ones included (its tests run from there).
release=.cache/releases/$tag
build_release() (
    mkdir -p .cache/releases && exec 9>"$release.lock" && flock 9
    [[ -f $release/built ]] && exit 0
    rm -rf "$release" && mkdir -p "$release/src" || exit 1
    echo "building $tag ($commit) into $release"
    git archive "$commit" | tar -x -C "$release/src" &&
        (cd "$release/src" && uv sync --frozen --quiet) &&
        touch "$release/built"
)
build_release || { echo "$suite: FAILED: could not build $tag into $release"; exit 1; }
release_daemon=$repo/$release/src/.venv/bin/claude-sidecar
echo "$suite: this checkout ($(git describe --tags --always HEAD), daemon" \
    "$("$this_daemon" --version)) and $tag (daemon $("$release_daemon" --version))"

protocol_step() { uv run python -m release protocol; }

# This checkout's clients (VS Code, Kotlin, Neovim) start the release's daemons (and stand-in
# models) through a fork server of the release's Python, as their own suites start this
# checkout's (tests/zygote/command.sh): a daemon started directly spent ~0.8 s of CPU
# importing, as much as the CLI it runs. The release's own tests start this checkout's
# daemon as users start it: they know no fork server, and one of them kills the daemon by
# the pid its client has, which would be the fork server's launcher's (the daemon then ended
# as on a closed stdin, withdrawing its requests itself).
source tests/zygote/command.sh
release_command=$release_daemon

vscode_step() (
    cd editors/vscode || exit 1
    command -v npm >/dev/null || missing "npm is not installed (Node 20+)"
    { [[ -d node_modules && ! package-lock.json -nt node_modules/.package-lock.json ]] ||
        npm ci --no-audit --no-fund --loglevel=error; } &&
        CLAUDE_SIDECAR_BIN=$release_command npm test --silent -- protocol build core
)

kotlin_step() (
    cd editors/intellij || exit 1
    # shellcheck source=../editors/intellij/scripts/maven.sh
    source scripts/maven.sh
    CLAUDE_SIDECAR_BIN=$release_command mvn -q -B -Dstyle.color=never "$test_jvm" test -pl core 2>&1 |
        sed -u 's/\x1b\[[0-9;]*m//g'
    status=${PIPESTATUS[0]}
    tests=0 failures=0
    for report in core/target/surefire-reports/TEST-*.xml; do
        [[ -f $report ]] || continue
        line=$(grep -m1 -o '<testsuite [^>]*>' "$report")
        attr() { sed -nE "s/.* $1=\"([0-9]+)\".*/\1/p" <<<"$line"; }
        tests=$((tests + $(attr tests)))
        failures=$((failures + $(attr failures) + $(attr errors)))
    done
    echo "Kotlin core against $tag: $tests tests, $failures failures"
    exit "$status"
)

# pytest leaves the tests not marked cross_release out (tests/conftest.py); only the files
# that mark some are collected (collecting the whole suite costs each worker 6 s of CPU).
marked_files() { grep -rl --include='test_*.py' 'cross_release' tests | sort; }
clients_step() { # the clients among them: the Neovim plugin's tests and the quick start's
    mapfile -t files < <(marked_files | grep -E '^tests/(nvim/|test_client_quickstart)')
    SIDECAR_TEST_DAEMON=$release_command uv run pytest -p no:cacheprovider "${files[@]}"
}
# The release's tests whose behaviour changed on purpose since (tests/cross-release-changes.txt).
changed_on_purpose() { sed -nE "s/^$1 ([^ ]+)  .*/\1/p" tests/cross-release-changes.txt; }
release_step() (
    mapfile -t changed < <(changed_on_purpose "$tag")
    deselect=()
    for test in "${changed[@]}"; do
        echo "not run (changed on purpose, tests/cross-release-changes.txt): $test"
        deselect+=(--deselect "$test")
    done
    cd "$release/src" || exit 1
    mapfile -t files < <(marked_files)
    SIDECAR_TEST_DAEMON=$this_daemon uv run --frozen pytest -p no:cacheprovider "${deselect[@]}" "${files[@]}"
)

declare -A what=(
    [protocol]="the schema breaks no client of $tag"
    [vscode]="VS Code core tests (this checkout) against the $tag daemon"
    [kotlin]="Kotlin core tests (this checkout) against the $tag daemon"
    [clients]="Neovim and quick start tests (this checkout) against the $tag daemon"
    [release]="$tag's own cross-release tests (its Neovim plugin, quick start, chat requests) against this daemon"
)
steps=(protocol vscode kotlin clients release)
(($# == 0)) || steps=("$@")
if [[ " ${steps[*]} " =~ \ (vscode|kotlin|clients)\  ]]; then
    fork_server "$repo/$release/src/.venv/bin/python"
    release_command=${fork_server_bin:-$release_daemon}
fi
results=()
status=0
for step in "${steps[@]}"; do
    [[ -n ${what[$step]:-} ]] || { echo "no step $step; the steps: ${!what[*]}"; exit 2; }
    echo
    echo "=== $step: ${what[$step]}"
    start=$SECONDS
    "${step}_step"
    rc=$?
    if ((rc == 0)); then
        results+=("PASS  $(printf '%-9s' "$step") $((SECONDS - start)) s  ${what[$step]}")
    else
        results+=("FAIL  $(printf '%-9s' "$step") $((SECONDS - start)) s  ${what[$step]}")
        status=1
    fi
done
echo
echo "=== $suite: summary"
printf '%s\n' "${results[@]}"
exit $status
