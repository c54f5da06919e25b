#!/usr/bin/env bash
# Draws README's picture of the page `agentpane web` serves (docs/img/web.png): demo-like fake
# agents on a private tmux server with its watcher and `agentpane web`, the page in Debian's
# headless Chromium at a phone's size, two screens side by side — the list, and a waiting
# pane's request with Allow and Deny. The drawing is a test of tests/web_browser.rs (which
# checks what it shows); this runs it with AGENTPANE_WEB_PICTURE set to where to write it.
#
#   scripts/web-capture.sh [FILE]     (default: docs/img/web.png)
#
# Touches nothing of yours: the test's tmux server, HOME, state folder and browser profile are
# temporary, and it ends what it started.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$root/docs/img/web.png}")"
[ -x /usr/bin/chromium ] || { echo "needs Chromium at /usr/bin/chromium (apt-get install chromium)" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
cd "$root"
AGENTPANE_WEB_PICTURE="$out" cargo test --test web_browser \
	the_readme_picture_shows_the_list_and_a_waiting_panes_request_with_its_buttons -- --exact
echo "wrote $out"
