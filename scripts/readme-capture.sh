#!/usr/bin/env bash
# Runs `agentpane demo --keep` on its private tmux server, waits until its agents have moved,
# and prints what a user sees there as text: the status segment, the window list with each
# window's glyph, and the picker (`agentpane pick`, drawn in a window of the demo's server).
# The README's first screen is pasted from this output, so it shows a real run. With --png FILE
# it also draws the picker above a tmux status line as a picture: the pane with its colours
# (`capture-pane -e`), scripts/ansi-html.py, a headless chromium screenshot.
#
#   scripts/readme-capture.sh [--png FILE] [AGENTPANE_BINARY] [SECONDS_TO_WAIT]
#
# Touches nothing of yours: the demo has its own server, HOME and state folder (in a temporary
# folder that it removes), and this script ends the demo by closing its stdin.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
png=""
if [ "${1:-}" = "--png" ]; then
	png="$(realpath -m "$2")"
	shift 2
	chromium="$(command -v chromium || command -v chromium-browser || true)"
	[ -n "$chromium" ] || { echo "--png needs chromium (apt-get install chromium)" >&2; exit 2; }
fi
bin="${1:-$root/target/release/agentpane}"
wait_s="${2:-12}"
[ -x "$bin" ] || { echo "no agentpane binary at $bin (cargo build --release)" >&2; exit 2; }

tmp="$(mktemp -d)"
fifo="$tmp/stdin"
mkfifo "$fifo"
demo_pid=""
cleanup() {
	exec 9>&- 2>/dev/null || true # EOF on the demo's stdin ends it
	[ -n "$demo_pid" ] && wait "$demo_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

env -u TMUX -u TMUX_PANE TMPDIR="$tmp" "$bin" demo --keep <"$fifo" >"$tmp/demo.out" 2>&1 &
demo_pid=$!
exec 9>"$fifo"

sock=""
for _ in $(seq 100); do
	sock="$(grep -o 'tmux -L [^ ]*' "$tmp/demo.out" | head -1 | cut -d' ' -f3 || true)"
	[ -n "$sock" ] && break
	sleep 0.1
done
[ -n "$sock" ] || { cat "$tmp/demo.out" >&2; echo "the demo did not start" >&2; exit 1; }
t() { tmux -L "$sock" "$@"; }
sleep "$wait_s"

# The picker runs in the demo's private world: the watcher pane's environment.
watcher_pid="$(t display-message -p -t demo:watcher '#{pane_pid}')"
env_flags=()
while IFS= read -r -d '' kv; do
	case "$kv" in
	HOME=* | AGENTPANE_STATE_DIR=* | XDG_STATE_HOME=* | CLAUDE_CONFIG_DIR=* | CODEX_HOME=* | \
		GEMINI_CLI_HOME=* | QWEN_HOME=* | XDG_DATA_HOME=*) env_flags+=(-e "$kv") ;;
	esac
done <"/proc/$watcher_pid/environ"
t new-window -d -t demo: -n pick "${env_flags[@]}" "$bin" -L "$sock" pick --from demo:1.0
t resize-window -t demo:pick -x 122 -y 17
sleep 2

echo "status-right:  $(t show-option -gqv @agentpane_status)"
echo "windows:       $(t list-windows -t demo -F '#I:#W#{?@agentpane_window_status, #{@agentpane_window_status},}' |
	grep -v -e ':watcher' -e ':pick' | tr '\n' ' ')"
echo
echo "prefix + S (the picker):"
# Trailing spaces and the blank lines around the picker dropped.
t capture-pane -p -t demo:pick | sed -e 's/[[:space:]]*$//' |
	awk 'NF { for (; n > 0; n--) print ""; print; seen = 1; next } seen { n++ }'

if [ -n "$png" ]; then
	# The picker with its colours, then a status line drawn as tmux's default one.
	windows="$(t list-windows -t demo -F '#I:#W#{?@agentpane_window_status, #{@agentpane_window_status},}' |
		grep -v -e ':watcher' -e ':pick' | tr '\n' ' ')"
	{
		t capture-pane -e -p -t demo:pick
		printf '\033[30;42m[demo] %-112s %s \033[0m\n' "$windows" "$(t show-option -gqv @agentpane_status)"
	} | python3 "$root/scripts/ansi-html.py" >"$tmp/page.html"
	"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1290,440 --screenshot="$png" "file://$tmp/page.html" >/dev/null 2>&1
	echo
	echo "picture: $png"
fi
