#!/usr/bin/env bash
# The Neovim client's Lua checks: luacheck (.luacheckrc) and StyLua's format check (stylua.toml),
# over editors/nvim and the plugin-manager emulations of its tests (tests/nvim/managers). Their
# own output, then one summary line. Exits non-zero on any failure.
# Installs what it needs, once (later runs start at once):
#   luacheck  Debian package lua-check (apt-get through tests/apt-install.sh; sudo only when not root)
#   stylua    npm @johnnymorganz/stylua-bin, into .toolchain/stylua/ (git-ignored)
# With CI=true a prerequisite that cannot be installed fails; otherwise the checks are skipped.
# Format the code: .toolchain/stylua/node_modules/.bin/stylua . (from editors/nvim, after a run).
set -uo pipefail
STYLUA_VERSION=2.5.2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" # editors/nvim
tc="$here/.toolchain"

missing() {
  if [[ "${CI:-}" == "true" ]]; then
    echo "Lua checks: FAILED: $1" >&2
    exit 1
  fi
  echo "SKIP: $1 (with CI=true this fails)"
  exit 0
}

# ---- luacheck (Debian lua-check) ---------------------------------------------------------------
if ! command -v luacheck >/dev/null; then
  mkdir -p "$tc"
  echo "Lua checks: installing luacheck (apt-get install lua-check)" >&2
  # tests/apt-install.sh: sudo when not root; waits for another install of Debian packages.
  bash "$here/../../tests/apt-install.sh" lua-check >"$tc/apt.log" 2>&1 \
    || { tail -5 "$tc/apt.log" >&2; missing "apt-get could not install luacheck (Debian package lua-check; log: $tc/apt.log)"; }
  command -v luacheck >/dev/null || missing "no luacheck after installing Debian lua-check"
fi

# ---- stylua (npm) ------------------------------------------------------------------------------
stylua="$tc/stylua/node_modules/.bin/stylua"
stylua_ok() { [[ -x "$stylua" ]] && "$stylua" --version 2>/dev/null | grep -qx "stylua $STYLUA_VERSION"; }
if ! stylua_ok; then
  command -v npm >/dev/null || missing "npm is not installed (it installs stylua from @johnnymorganz/stylua-bin)"
  echo "Lua checks: installing stylua $STYLUA_VERSION (npm @johnnymorganz/stylua-bin) into $tc/stylua" >&2
  mkdir -p "$tc/stylua"
  npm install --prefix "$tc/stylua" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "@johnnymorganz/stylua-bin@$STYLUA_VERSION" >&2 \
    || missing "npm could not install @johnnymorganz/stylua-bin@$STYLUA_VERSION"
  stylua_ok || missing "no stylua $STYLUA_VERSION after installing @johnnymorganz/stylua-bin"
fi

# ---- the checks --------------------------------------------------------------------------------
cd "$here" || exit 1
status=0

echo "== luacheck"
out="$(luacheck --no-color --quiet --codes . ../../tests/nvim/managers 2>&1)"
luacheck_status=$?
printf '%s\n' "$out"
total="$(grep -m1 -oE '^Total: [0-9]+ warnings? / [0-9]+ errors? in [0-9]+ files?' <<<"$out")"
if [[ $luacheck_status -eq 0 && -n "$total" ]]; then
  luacheck_summary="luacheck ${total#Total: }"
else
  luacheck_summary="luacheck FAILED ($(if [[ -n "$total" ]]; then echo "${total#Total: }"; else echo "exit $luacheck_status"; fi))"
  status=1
fi

echo "== stylua --check"
if "$stylua" --check . ../../tests/nvim/managers; then
  stylua_summary="stylua ok"
else
  stylua_summary="stylua FAILED (format with: $stylua .)"
  status=1
fi

echo "Lua checks: $luacheck_summary, $stylua_summary"
exit $status
