#!/usr/bin/env bash
# What agentpane's waiting commands cost while nothing arrives, measured on a private tmux
# server with fake agents. Each command is started, left WAIT_SECS (60) seconds with nothing
# to do, and its CPU time read from /proc: its own threads (schedstat, ns precision) and the
# processes it spawned and reaped (cutime+cstime, e.g. tmux clients). The four run side by
# side in the same window:
#
#   watch                 the watcher, default 5 s safety poll, with the fake agents below
#   route --wait          routing into a Codex pane that stays in the middle of a turn
#   relay --foreground    relaying between two Codex panes that both stay mid-turn
#   channel watch         waiting on a channel nobody writes to
#
#   scripts/wait-cost.sh                 # the full run (~80 s)
#   WAIT_SECS=10 scripts/wait-cost.sh    # a quick check
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WAIT_SECS=${WAIT_SECS:-60}
OUT=$ROOT/target/wait-cost
mkdir -p "$OUT"

. scripts/bench-lib.sh
bench_need jq jq
bench_need tmux tmux
bench_build
bench_world
HZ=$(getconf CLK_TCK)
MID_TURN=$ROOT/fixtures/real/codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl

# A Codex fake in the middle of a turn (working), in its own folder; prints its pane id.
mid_turn_codex() {
    mkdir -p "$WORK/work/$1"
    "${T[@]}" new-window -d -P -F '#{pane_id}' -t main: -c "$WORK/work/$1" \
        -e "AGENTPANE_FAKE_AGENT=$MID_TURN" "$WORK/bin/codex"
}
state_of() { "$BIN" -L "$SERVER" resolve "$1" --json 2>/dev/null | jq -r '.state' 2>/dev/null; }
until_working() {
    local p
    for p in "$@"; do
        for _ in $(seq 1 200); do
            [[ $(state_of "$p") == working ]] && continue 2
            sleep 0.1
        done
        echo "wait-cost: pane $p never read as working" >&2
        exit 1
    done
}

SRC=$("${T[@]}" new-window -d -P -F '#{pane_id}' -t main: "printf 'hand-over text\\n'; exec sleep 3600")
DST=$(mid_turn_codex dst)
RA=$(mid_turn_codex relay-a)
RB=$(mid_turn_codex relay-b)
until_working "$DST" "$RA" "$RB"
CHANNEL=$("$BIN" channel new --as alice 2>/dev/null)
"$BIN" channel join "$CHANNEL" --as bob >/dev/null

NAMES=(watch "route --wait" "relay --foreground" "channel watch")
"$BIN" -L "$SERVER" watch --no-bell --no-notify --no-message 2>"$OUT/watch.log" &
PIDS=($!)
"$BIN" -L "$SERVER" route "$SRC" "$DST" --transform full-output --wait 3600 \
    >/dev/null 2>"$OUT/route.log" &
PIDS+=($!)
"$BIN" -L "$SERVER" relay "$RA" "$RB" --foreground 2>"$OUT/relay.log" &
PIDS+=($!)
"$BIN" channel watch "$CHANNEL" --as bob --timeout 1h >/dev/null 2>"$OUT/channel.log" &
PIDS+=($!)
BENCH_PIDS="${PIDS[*]}"
# Let them finish their shutdown writes before the temporary world is removed.
wait_cleanup() {
    kill "${PIDS[@]}" >/dev/null 2>&1 || true
    wait "${PIDS[@]}" 2>/dev/null || true
    bench_cleanup
}
trap wait_cleanup EXIT

# Fields 14-17 of /proc/PID/stat: utime stime cutime cstime (clock ticks); the command name
# (field 2) has no spaces here. schedstat field 1: ns on CPU, summed over the threads (printed
# with %.0f: mawk's %d stops at 2^31 ns, 2.1 s, which a busy loop passes).
kids() { awk '{ print $16 + $17 }' "/proc/$1/stat"; }
sched_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }

sleep 5 # start-up: first scans, resolutions, watches
declare -A ns0 kids0
for pid in "${PIDS[@]}"; do
    [[ -d /proc/$pid ]] || {
        echo "wait-cost: pid $pid ended early; see $OUT/*.log" >&2
        exit 1
    }
    ns0[$pid]=$(sched_ns "$pid")
    kids0[$pid]=$(kids "$pid")
done
t0=$(date +%s%N)
echo "wait-cost: ${WAIT_SECS}s with nothing arriving" >&2
sleep "$WAIT_SECS"
t1=$(date +%s%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')

{
    echo "| waiting command (${wall} s, nothing arriving) | own CPU (schedstat) | spawned processes (cutime+cstime) | total, % of one core | < 0.1 %? |"
    echo "|---|---|---|---|---|"
    for i in "${!PIDS[@]}"; do
        pid=${PIDS[$i]}
        [[ -d /proc/$pid ]] || {
            echo "wait-cost: ${NAMES[$i]} ended during the wait; see $OUT/*.log" >&2
            exit 1
        }
        own=$(awk -v a="${ns0[$pid]}" -v b="$(sched_ns "$pid")" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
        kid=$(((($(kids "$pid") - kids0[$pid])) * 1000 / HZ))
        pct=$(awk -v o="$own" -v k="$kid" -v w="$wall" 'BEGIN { printf "%.3f", (o + k) / 10 / w }')
        ok=$(awk -v p="$pct" 'BEGIN { print (p < 0.1) ? "yes" : "**no**" }')
        echo "| \`${NAMES[$i]}\` | ${own} ms | ${kid} ms | ${pct} % | ${ok} |"
    done
    echo
    echo "Machine: $(bench_machine)."
} | tee "$OUT/wait-cost.md"
