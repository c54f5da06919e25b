#!/usr/bin/env bash
# What the watcher and one-shot `status` cost per agent kind, measured on private tmux servers
# with fake agents (docs/benchmarks.md#watcher-cost-per-agent-kind). For every agent kind
# agentpane knows (KINDS: the names in `AgentKind::ALL`, each of which the binary can fake)
# and for a mixed server:
#
#   1. `status --scan` over PANES (25) idle panes of the kind: hyperfine median, 30 runs, and
#      its CPU (user + system, the tmux clients it waited for included);
#   2. the idle watcher beside them, once its safety polls ask tmux nothing (the panes have
#      been quiet on their terminals for 20 s): CPU over IDLE_SECS (60) seconds from /proc
#      (its threads' schedstat, ns, plus cutime+cstime of the tmux clients it spawned), and
#      its wakes; a minute holds one of the resolutions the watcher redoes every minute; then
#      `status` while the watcher runs (it counts the watcher's view), median and CPU;
#   3. the watcher with one of the PANES panes writing a step every 300 ms (the fake replays
#      its fixture over and over), over WRITE_SECS (20) seconds;
#   4. the same three over MIXED (100) panes of every kind in turn, the writer a Claude Code
#      and then an opencode pane.
#
# UNUSED=1 adds to each idle world one more pane of the (first) kind, a session opened and
# never used: it writes no log, so the watcher keeps looking for one (not for amp or aider,
# whose logs agentpane does not read).
#
# The watcher runs as the plugin starts it (default 5 s safety poll), without desktop side
# effects. Its wakes are read from the counters it logs on SIGUSR1; for a build older than
# that (BENCH_OLD=1), the watcher is started again with a `tmux` on its PATH that counts the
# `list-panes` calls (each wake ran one then) over a second window of the same length.
#
#   scripts/watcher-kinds.sh                              # everything (~35 min)
#   STATUS_ONLY=1 scripts/watcher-kinds.sh                # the status columns alone (~6 min)
#   KINDS="claude opencode" MIXED=0 IDLE_SECS=10 scripts/watcher-kinds.sh   # a quick look
#   ROWS="opencode kilo" scripts/watcher-kinds.sh          # two kinds' rows, then the mixed ones
#   BENCH_OLD=1 BENCH_BIN=/path/to/old/agentpane scripts/watcher-kinds.sh   # an older build
#   UNUSED=1 KINDS="claude gemini" MIXED=0 scripts/watcher-kinds.sh   # beside an unused session
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KINDS=${KINDS:-claude codex gemini opencode qwen copilot kilo pi amp aider}
# The kinds that get rows of their own (the mixed rows take every one of KINDS).
ROWS=${ROWS:-$KINDS}
PANES=${PANES:-25}
MIXED=${MIXED:-100}
MIXED_WRITERS=${MIXED_WRITERS:-claude opencode}
IDLE_SECS=${IDLE_SECS:-60}
WRITE_SECS=${WRITE_SECS:-20}
PACE_MS=${PACE_MS:-300}
OLD=${BENCH_OLD:-0}
OUT=$ROOT/target/watcher-kinds
mkdir -p "$OUT"

. scripts/bench-lib.sh
bench_need jq jq
bench_need tmux tmux
bench_need hyperfine hyperfine
bench_build
HZ=$(getconf CLK_TCK)
# A screen-only agent's steps: lines on its screen.
SCREEN_STEPS=$OUT/screen-steps.txt
printf '%s\n' "● Reading the code" "● Editing src/main.rs" "● Done." >"$SCREEN_STEPS"

# fixture KIND: the recorded session an idle fake of KIND replays (tests/common/mod.rs
# `FakeAgent::idle` uses the same ones); a screen-only kind gets a few screen lines.
fixture() {
    case $1 in
    claude) echo "$ROOT/fixtures/real/claude/marot-spotter/short.jsonl" ;;
    codex) echo "$ROOT/fixtures/real/codex/kvsankar-agent-history/session-01.jsonl" ;;
    gemini) echo "$ROOT/fixtures/real-clients/gemini-0.61.0/session.jsonl" ;;
    opencode | kilo) echo "$ROOT/fixtures/real-clients/opencode-1.18.33/replay.sql" ;;
    qwen) echo "$ROOT/fixtures/real-clients/qwen-0.24.4/states/25-tool-done/chat.jsonl" ;;
    copilot) echo "$ROOT/fixtures/real-clients/copilot-1.0.102/demo.jsonl" ;;
    pi) echo "$ROOT/fixtures/real-clients/pi-0.73.1/demo.jsonl" ;;
    *) echo "$SCREEN_STEPS" ;;
    esac
}

# add_pane KIND [writer]: one fake of KIND in its own folder; a writer starts with nothing and
# writes one step every PACE_MS, forever.
add_pane() {
    local kind=$1 dir env
    dir=$WORK/work/p$BENCH_AGENTS
    mkdir -p "$dir"
    env=(-e "AGENTPANE_FAKE_AGENT=$(fixture "$kind")")
    if [[ ${2:-} == writer ]]; then
        env+=(-e AGENTPANE_FAKE_PACE_MS="$PACE_MS" -e AGENTPANE_FAKE_REPEAT=1)
    elif [[ ${2:-} == unused ]]; then
        env=(-e AGENTPANE_FAKE_AGENT=none -e AGENTPANE_FAKE_LATE=1)
    fi
    "${T[@]}" new-window -d -t main: -c "$dir" "${env[@]}" "$WORK/bin/$kind"
    BENCH_AGENTS=$((BENCH_AGENTS + 1))
}

# wait_agents N: until N panes run an agent and every one whose log agentpane reads has it.
wait_agents() {
    local got=0
    for _ in $(seq 1 900); do
        got=$("$BIN" -L "$SERVER" panes --json 2>/dev/null | jq '[.[] |
            select(.agent != null and (.transcript != null or .agent == "amp" or .agent == "aider"))]
            | length' 2>/dev/null || echo 0)
        ((got >= $1)) && return 0
        sleep 0.2
    done
    echo "watcher-kinds: only $got of $1 agents resolved" >&2
    return 1
}

# status_ms [ARGS]: "<median wall ms> <mean CPU ms>" of `status ARGS` (hyperfine, 30 runs;
# the CPU is user + system of it and the tmux clients it waited for).
status_ms() {
    hyperfine -N --style none --warmup 3 --runs 30 --export-json "$OUT/status.json" \
        "$BIN -L $SERVER status $*" >/dev/null 2>&1
    jq -r '.results[0] | "\(.median * 1000 | . * 10 | round / 10) \((.user + .system) * 1000 | . * 10 | round / 10)"' \
        "$OUT/status.json"
}

# cpu PID: "<ns on CPU, all threads> <ticks of reaped children>".
cpu() {
    echo "$(cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }')" \
        "$(awk '{ print $16 + $17 }' "/proc/$1/stat")"
}

wakes_now() { # the watcher's wake count from its SIGUSR1 log line
    local before now
    before=$(cat "$AGENTPANE_STATE_DIR"/servers/*/watch.log 2>/dev/null | grep -c 'counters:')
    before=${before:-0}
    kill -USR1 "$WATCHER"
    for _ in $(seq 1 50); do
        now=$(cat "$AGENTPANE_STATE_DIR"/servers/*/watch.log 2>/dev/null | grep -c 'counters:')
        ((${now:-0} > before)) && break
        sleep 0.1
    done
    cat "$AGENTPANE_STATE_DIR"/servers/*/watch.log | grep 'counters:' | tail -1 | sed -E 's/.*wakes ([0-9]+).*/\1/'
}

# start_watcher [PATH]: the watcher, started and settled: its first scan published, then no
# CPU for a second (a busy loop never settles: 15 s at most).
start_watcher() {
    local a b
    PATH=${1:-$PATH} "$BIN" -L "$SERVER" watch --no-bell --no-notify --no-message 2>/dev/null &
    WATCHER=$!
    BENCH_PIDS="$WATCHER"
    for _ in $(seq 1 300); do
        [[ -n $("${T[@]}" show -gv @agentpane_status 2>/dev/null) ]] && break
        sleep 0.1
    done
    a=$(cpu "$WATCHER")
    for _ in $(seq 1 15); do
        sleep 1
        b=$(cpu "$WATCHER")
        [[ ${a%% *} == "${b%% *}" ]] && break
        a=$b
    done
}

stop_watcher() {
    kill "$WATCHER"
    wait "$WATCHER" 2>/dev/null || true
    BENCH_PIDS=""
}

# old_wakes SECS: the wakes of a watcher older than its counters, over SECS seconds: the
# `list-panes` calls a counting `tmux` in front of the real one sees.
old_wakes() {
    local real
    real=$(command -v tmux)
    mkdir -p "$WORK/count"
    printf '#!/bin/sh\ncase "$*" in *list-panes*) echo >>"%s" ;; esac\nexec "%s" "$@"\n' \
        "$WORK/count/calls" "$real" >"$WORK/count/tmux"
    chmod +x "$WORK/count/tmux"
    start_watcher "$WORK/count:$PATH"
    : >"$WORK/count/calls"
    sleep "$1"
    wc -l <"$WORK/count/calls"
    stop_watcher
}

# quiet_polls: the watcher's count of safety polls that asked tmux nothing, from its
# SIGUSR1 log line (0 for a build older than that).
quiet_polls() {
    wakes_now >/dev/null
    cat "$AGENTPANE_STATE_DIR"/servers/*/watch.log | grep 'counters:' | tail -1 |
        sed -nE 's/.*quiet polls ([0-9]+).*/\1/p' | grep . || echo 0
}

# until_quiet: waits (60 s at most) until two safety polls in a row asked tmux nothing: the
# idle state the watcher stays in while nothing happens.
until_quiet() {
    local first
    ((OLD)) && return 0
    first=$(quiet_polls)
    for _ in $(seq 1 60); do
        sleep 1
        (($(quiet_polls) >= first + 2)) && return 0
    done
    echo "watcher-kinds: the safety poll never went quiet" >&2
}

# watch_cost SECS [idle]: starts the watcher, lets it settle (idle: until its polls are
# quiet), and prints
# "<own ms> <children ms> <% of one core> <wakes>" over SECS seconds; stops it.
watch_cost() {
    local secs=$1 c0 k0 c1 k1 w0 w1 own kids pct wakes watched=""
    start_watcher
    [[ ${2:-} == idle ]] && until_quiet
    ((OLD)) || w0=$(wakes_now)
    read -r c0 k0 < <(cpu "$WATCHER")
    sleep "$secs"
    read -r c1 k1 < <(cpu "$WATCHER")
    ((OLD)) || w1=$(wakes_now)
    # `status` while the watcher serves the server: its view, no scan.
    [[ ${2:-} == idle ]] && watched=$(status_ms)
    stop_watcher
    if ((OLD)); then
        wakes=$(old_wakes "$secs")
    else
        wakes=$((w1 - w0))
    fi
    own=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
    kids=$(((k1 - k0) * 1000 / HZ))
    pct=$(awk -v o="$own" -v k="$kids" -v s="$secs" 'BEGIN { printf "%.3f", (o + k) / 10 / s }')
    echo "$own $kids $pct $wakes $watched"
}

# measure LABEL KINDS...: one row. The idle world: one pane per KINDS word, in turn, up to
# the count; status and the idle watcher. The writer world: the same with the last pane a
# writer of WRITER (default: the first kind).
measure() {
    local label=$1 count=$2 writer=$3
    shift 3
    local kinds=("$@") i status idle write
    (
        bench_world
        for ((i = 0; i < count; i++)); do add_pane "${kinds[i % ${#kinds[@]}]}"; done
        wait_agents "$count"
        if ((${UNUSED:-0})) && [[ ${kinds[0]} != amp && ${kinds[0]} != aider ]]; then
            add_pane "${kinds[0]}" unused
        fi
        # An older build has no --scan (and always scanned).
        echo "$(status_ms "$( ((OLD)) || echo --scan)") $(watch_cost "$IDLE_SECS" idle)" >"$OUT/row-idle"
    )
    (
        bench_world
        for ((i = 0; i < count - 1; i++)); do add_pane "${kinds[i % ${#kinds[@]}]}"; done
        add_pane "$writer" writer
        wait_agents "$count"
        echo "$(watch_cost "$WRITE_SECS")" >"$OUT/row-write"
    )
    read -r swall scpu iown ikids ipct iwakes wwall wcpu <"$OUT/row-idle"
    read -r wown wkids wpct wwakes <"$OUT/row-write"
    echo "| $label | $swall / $scpu ms | $wwall / $wcpu ms | $iown + $ikids ms = **$ipct %** | $iwakes | $wown + $wkids ms = **$wpct %** | $wwakes |"
}

# status_row LABEL COUNT KINDS...: `status --scan`, then `status` with the watcher running.
status_row() {
    local label=$1 count=$2 i
    shift 2
    local kinds=("$@")
    (
        bench_world
        for ((i = 0; i < count; i++)); do add_pane "${kinds[i % ${#kinds[@]}]}"; done
        wait_agents "$count"
        local scan
        scan=$(status_ms --scan)
        start_watcher
        echo "| $label | ${scan/ / / } ms | $(status_ms | sed 's| | / |') ms |"
        stop_watcher
    )
}

if ((${STATUS_ONLY:-0})); then
    echo "| panes | \`status --scan\`: median / CPU | \`status\`, watcher running: median / CPU |" | tee "$OUT/status-kinds.md"
    echo "|---|---:|---:|" | tee -a "$OUT/status-kinds.md"
    for kind in $KINDS; do
        status_row "$PANES $kind" "$PANES" "$kind" | tee -a "$OUT/status-kinds.md"
    done
    # shellcheck disable=SC2086
    ((MIXED)) && status_row "$MIXED mixed" "$MIXED" $KINDS | tee -a "$OUT/status-kinds.md"
    echo "Machine: $(bench_machine)." | tee -a "$OUT/status-kinds.md"
    exit 0
fi

{
    echo "| panes | \`status --scan\`: median / CPU | \`status\`, watcher running: median / CPU | idle watcher, ${IDLE_SECS} s: own + children = % of a core | wakes | one pane writing every ${PACE_MS} ms, ${WRITE_SECS} s | wakes |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
} | tee "$OUT/watcher-kinds.md"
for kind in $ROWS; do
    echo "watcher-kinds: $PANES $kind panes" >&2
    label="$PANES $kind"
    ((${UNUSED:-0})) && [[ $kind != amp && $kind != aider ]] && label+=" + 1 unused"
    measure "$label" "$PANES" "$kind" "$kind" | tee -a "$OUT/watcher-kinds.md"
done
if ((MIXED)); then
    for writer in $MIXED_WRITERS; do
        echo "watcher-kinds: $MIXED mixed panes, $writer writing" >&2
        # shellcheck disable=SC2086
        measure "$MIXED mixed ($writer writing)" "$MIXED" "$writer" $KINDS | tee -a "$OUT/watcher-kinds.md"
    done
fi
echo | tee -a "$OUT/watcher-kinds.md"
echo "Machine: $(bench_machine)." | tee -a "$OUT/watcher-kinds.md"
