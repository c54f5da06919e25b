#!/usr/bin/env bash
# What the watcher costs (docs/design.md#performance), measured on a private tmux server with fake agents:
#
#   1. CPU over IDLE_SECS (60) idle seconds with AGENTS (20) watched sessions: utime+stime of the
#      watcher from /proc/PID/stat, and cutime+cstime (the tmux clients it spawned and reaped);
#   2. append → tmux option latency: a line appended to a fake Claude transcript (alternately a
#      user prompt and a final answer), then `tmux show -pv -t %N @agentpane_pane_status` polled
#      until it reads the new state; p50/p95 over SAMPLES (40) appends;
#   3. RSS (VmRSS, VmHWM) before and after 1 GB is appended to one watched transcript, and the
#      append latency on that 1 GB transcript.
#
#   scripts/watcher-cost.sh                  # the full run (~3 min)
#   IDLE_SECS=10 SAMPLES=10 BIG=0 scripts/watcher-cost.sh   # a quick check
#   NOTIFY='terminal ntfy' scripts/watcher-cost.sh            # with notification channels on
#   WEB=2 scripts/watcher-cost.sh             # the watcher serving the web page, 2 pages open
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
IDLE_SECS=${IDLE_SECS:-60}
AGENTS=${AGENTS:-20}
SAMPLES=${SAMPLES:-40}
BIG=${BIG:-1}
OUT=$ROOT/target/watcher-cost
mkdir -p "$OUT"

. scripts/bench-lib.sh
bench_need jq jq
bench_need tmux tmux
bench_build
BIG_FILE=$ROOT/target/bench-data/claude-1024mb.jsonl
if ((BIG)) && [[ ! -s $BIG_FILE ]]; then
    echo "watcher-cost: generating the 1 GB transcript" >&2
    AGENTPANE_BENCH_SIZES_MB=1024 cargo bench --quiet --bench classify -- --test >/dev/null
fi
bench_world
HZ=$(getconf CLK_TCK)

bench_add_agents "$AGENTS"
if [[ -n ${NOTIFY:-} ]]; then
    # Channels on (README, Notifications); the ntfy address is a closed local port: idle,
    # nothing is sent.
    "${T[@]}" set -g @agentpane-notify "$NOTIFY"
    "${T[@]}" set -g @agentpane-ntfy-url http://127.0.0.1:9/agentpane-bench
fi

if [[ -n ${WEB:-} ]]; then
    # The page for a phone, served by the watcher on a free port (README, Watch from your phone).
    "${T[@]}" set -g @agentpane-web 127.0.0.1:0
fi

# The watcher, as the plugin starts it (default 5 s safety poll), without desktop side effects.
"$BIN" -L "$SERVER" watch --no-bell --no-notify --no-message &
WATCHER=$!
BENCH_PIDS="$WATCHER"
for _ in $(seq 1 300); do
    [[ -n $("${T[@]}" show -gv @agentpane_status 2>/dev/null) ]] && break
    sleep 0.1
done
[[ -n $("${T[@]}" show -gv @agentpane_status 2>/dev/null) ]] || {
    echo "watcher-cost: the watcher never published @agentpane_status" >&2
    exit 1
}

if [[ -n ${WEB:-} ]]; then
    bench_need curl curl
    url=""
    for _ in $(seq 1 100); do
        url=$("$BIN" -L "$SERVER" web --url 2>/dev/null | head -1) && [[ -n $url ]] && break
        sleep 0.1
    done
    [[ -n $url ]] || {
        echo "watcher-cost: the watcher never served the page" >&2
        exit 1
    }
    # WEB open pages: each one event stream, as a phone's browser holds it.
    for i in $(seq 1 "$WEB"); do
        curl -sN -H "Authorization: Bearer ${url##*#t=}" "${url%%/#*}/api/events" >"$OUT/events-$i.txt" &
        BENCH_PIDS="$BENCH_PIDS $!"
    done
fi

# Fields 14-17 of /proc/PID/stat: utime stime cutime cstime (clock ticks). The command name
# (field 2) has no spaces here.
ticks() { awk '{ print $14 + $15, $16 + $17 }' "/proc/$WATCHER/stat"; }
# Nanoseconds on CPU, summed over the watcher's threads (/proc/PID/task/*/schedstat, field 1):
# the same CPU time as utime+stime without the 10 ms tick granularity.
sched_ns() { cat /proc/"$WATCHER"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }
kib() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$WATCHER/status"; }

# ---- 1. idle CPU ---------------------------------------------------------------------------
sleep 3 # let the start-up scans settle
read -r own0 kids0 < <(ticks)
ns0=$(sched_ns)
t0=$(date +%s%N)
echo "watcher-cost: idle for ${IDLE_SECS}s with $AGENTS sessions" >&2
sleep "$IDLE_SECS"
read -r own1 kids1 < <(ticks)
ns1=$(sched_ns)
t1=$(date +%s%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
own_ms=$(((own1 - own0) * 1000 / HZ))
sched_ms=$(awk -v a="$ns0" -v b="$ns1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
kids_ms=$(((kids1 - kids0) * 1000 / HZ))
pct() { awk -v ms="$1" -v w="$wall" 'BEGIN { printf "%.3f", ms / 10 / w }'; }
rss_small=$(kib VmRSS)

# ---- 2. append → option latency ------------------------------------------------------------
now() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
user_line() {
    jq -cn --arg t "$(now)" --arg u "bench-u-$1" \
        '{type:"user",isSidechain:false,uuid:$u,timestamp:$t,message:{role:"user",content:"next step please"}}'
}
answer_line() {
    jq -cn --arg t "$(now)" --arg u "bench-a-$1" --arg m "msg_bench_$1" \
        '{type:"assistant",isSidechain:false,uuid:$u,timestamp:$t,message:{id:$m,role:"assistant",model:"bench",content:[{type:"text",text:"Done."}],stop_reason:"end_turn"}}'
}

# probe PANE TRANSCRIPT I: appends line I (even: prompt → working, odd: answer → your-turn) and
# prints the milliseconds until the pane's option shows the new state (9999 after 5 s).
probe() {
    local pane=$1 file=$2 i=$3 want line start end
    if ((i % 2 == 0)); then
        want=working line=$(user_line "$i")
    else
        want=your-turn line=$(answer_line "$i")
    fi
    start=$(date +%s%N)
    printf '%s\n' "$line" >>"$file"
    while [[ $("${T[@]}" show -pv -t "$pane" @agentpane_pane_status 2>/dev/null) != "$want" ]]; do
        end=$(date +%s%N)
        if (((end - start) > 5000000000)); then
            echo 9999
            return
        fi
    done
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

percentiles() { # stdin: numbers → "p50 p95 max"
    sort -n | awk '{ v[NR] = $1 } END {
        p50 = v[int((NR - 1) * 0.50) + 1]; p95 = v[int((NR - 1) * 0.95 + 0.5) + 1];
        print p50, p95, v[NR] }'
}

latency() { # PANE FILE LABEL → writes samples to $OUT/latency-LABEL.txt
    local pane=$1 file=$2 label=$3 i
    : >"$OUT/latency-$label.txt"
    for i in $(seq 0 $((SAMPLES - 1))); do
        probe "$pane" "$file" "$i" >>"$OUT/latency-$label.txt"
        sleep 0.3
    done
    percentiles <"$OUT/latency-$label.txt"
}

read -r pane file < <("$BIN" -L "$SERVER" panes --json |
    jq -r '[.[] | select(.agent == "claude" and .transcript != null)][0] | "\(.pane_id) \(.transcript)"')
echo "watcher-cost: $SAMPLES appends to $pane" >&2
read -r lat50 lat95 latmax < <(latency "$pane" "$file" small)

# ---- 3. RSS with a 1 GB transcript ---------------------------------------------------------
big_row=""
if ((BIG)); then
    read -r bpane bfile < <("$BIN" -L "$SERVER" panes --json |
        jq -r '[.[] | select(.agent == "claude" and .transcript != null)][1] | "\(.pane_id) \(.transcript)"')
    echo "watcher-cost: appending 1 GB to $bfile" >&2
    cat "$BIG_FILE" >>"$bfile"
    sleep 8 # the append's own wake-up plus one safety poll
    rss_big=$(kib VmRSS)
    echo "watcher-cost: $SAMPLES appends to the 1 GB transcript ($bpane)" >&2
    read -r big50 big95 bigmax < <(latency "$bpane" "$bfile" big)
    hwm=$(kib VmHWM)
    big_row="yes"
fi

{
    echo "| watcher (\`agentpane watch\`, default 5 s safety poll, $AGENTS fake agent sessions) | result |"
    echo "|---|---|"
    echo "| idle CPU, ${wall} s: watcher's own utime+stime | ${own_ms} ms = $(pct "$own_ms") % of one core |"
    echo "| idle CPU, same window: watcher's threads on CPU (schedstat, ns precision) | ${sched_ms} ms = $(pct "$sched_ms") % |"
    echo "| idle CPU, same window: tmux clients it spawned (cutime+cstime) | ${kids_ms} ms = $(pct "$kids_ms") % |"
    echo "| append → \`@agentpane_pane_status\` updated ($SAMPLES appends) | p50 ${lat50} ms, p95 ${lat95} ms, max ${latmax} ms |"
    echo "| RSS with $AGENTS small transcripts | $((rss_small / 1024)) MB ($rss_small KiB) |"
    if [[ -n $big_row ]]; then
        echo "| RSS after 1 GB appended to one watched transcript | $((rss_big / 1024)) MB ($rss_big KiB); peak (VmHWM) over the whole run $((hwm / 1024)) MB ($hwm KiB) |"
        echo "| append → option updated on the 1 GB transcript ($SAMPLES appends) | p50 ${big50} ms, p95 ${big95} ms, max ${bigmax} ms |"
    fi
    echo
    echo "Machine: $(bench_machine). Latency includes the probe's own polling (one \`tmux show\` spawn per check, ~2–5 ms)."
} | tee "$OUT/watcher-cost.md"
