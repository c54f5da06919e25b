#!/usr/bin/env bash
# Routing latency (docs/routing.md#delivery): `route` command start → Enter submitted, as its
# `--json` reports it (`latency_ms`), routing a plain pane's screen into an idle fake Claude Code
# on a private tmux server, RUNS times; prints each run and the median. The Enter delay is set
# to 0 so the number is agentpane's own cost (tmux round trips, the recipient checks).
#
#   scripts/route-latency.sh [path/to/agentpane]    # default target/release/agentpane
set -euo pipefail
bin=$(realpath "${1:-target/release/agentpane}")
runs=${RUNS:-10}
root=$(mktemp -d)
sock="agentpane-latency-$$"
cleanup() {
    tmux -L "$sock" kill-server 2>/dev/null || true
    rm -rf "$root"
}
trap cleanup EXIT
mkdir -p "$root"/{home,state,claude,bin,work}
ln -s "$bin" "$root/bin/claude"
export HOME="$root/home" AGENTPANE_STATE_DIR="$root/state" CLAUDE_CONFIG_DIR="$root/claude"
export AGENTPANE_ENTER_DELAY_MS=0
unset TMUX TMUX_PANE
tmux -L "$sock" -f /dev/null new-session -d -s m -x 200 -y 50 -c "$root/work" \
    "printf 'hello from the source pane\\n'; exec sleep 600"
dst=$(tmux -L "$sock" new-window -d -P -F '#{pane_id}' -c "$root/work" \
    -e AGENTPANE_FAKE_AGENT=none "$root/bin/claude")
for _ in $(seq 50); do
    "$bin" -L "$sock" resolve "$dst" --json 2>/dev/null | grep -q '"transcript":"' && break
    sleep 0.1
done
latencies=()
for i in $(seq "$runs"); do
    out=$("$bin" -L "$sock" route m:0.0 "$dst" --transform full-output --json)
    ms=$(printf '%s' "$out" | sed -n 's/.*"latency_ms":\([0-9]*\).*/\1/p')
    [ -n "$ms" ] || { echo "run $i failed: $out" >&2; exit 1; }
    echo "run $i: $ms ms"
    latencies+=("$ms")
    sleep 0.3
done
printf '%s\n' "${latencies[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print "median: " m " ms over " NR " runs"}'
