#!/usr/bin/env bash
# Side by side, in one run: agentpane vs the naive ways people get the same answer today
# (docs/design.md#performance). Prints one Markdown table of medians and ratios (theirs / ours), and keeps the raw
# hyperfine JSON in target/compare/.
#
#   scripts/compare.sh                 # everything: 1 MB / 100 MB / 1 GB, N = 1, 10, 50 panes
#   SIZES_MB="1 100" PANES="1 10" scripts/compare.sh
#
# (a) state of one transcript:  agentpane classify FILE
#       vs full-file parse      jq -s (1 GB: streaming `jq -c 'select(.type)' | tail -1`, so
#                               jq's memory stays bounded; capped at JQ_TIMEOUT seconds)
#       vs Agent Island window  last 128 KiB, last 200 lines, parsed with jq
# (b) status over N panes:      agentpane status (or `panes` where status is not built)
#       vs capture-pane polling list-panes + capture-pane -p of every pane + grep for prompts
#     on a private tmux server (-L agentpane-bench-PID) with N fake agents (src/fake_agent.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SIZES_MB=${SIZES_MB:-"1 100 1024"}
PANES=${PANES:-"1 10 50"}
JQ_TIMEOUT=${JQ_TIMEOUT:-120}
OUT=$ROOT/target/compare
mkdir -p "$OUT"

. scripts/bench-lib.sh
bench_need hyperfine hyperfine
bench_need jq jq
bench_need tmux tmux
bench_build

# Transcripts of each size, built by the classify bench's generator (kept in target/bench-data).
DATA=$ROOT/target/bench-data
missing=""
for mb in $SIZES_MB; do
    [[ -s $DATA/claude-${mb}mb.jsonl ]] || missing="$missing,$mb"
done
if [[ -n $missing ]]; then
    echo "compare: generating transcripts (${missing#,} MB)" >&2
    AGENTPANE_BENCH_SIZES_MB=${missing#,} cargo bench --quiet --bench classify -- --test >/dev/null
fi

bench_world

# The naive commands, as small scripts so hyperfine runs them without quoting games.
cat >"$WORK/jq-full.sh" <<'EOF'
jq -s 'map(select(.type)) | last | .type' "$1" >/dev/null
EOF
cat >"$WORK/jq-stream.sh" <<'EOF'
timeout "$2" jq -c 'select(.type) | .type' "$1" | tail -n 1 >/dev/null
EOF
# Agent Island 1.7.1: the last 128 KiB, at most 200 lines, each parsed (the first, cut line
# is skipped as invalid), the newest record with a type wins.
cat >"$WORK/window.sh" <<'EOF'
tail -c 131072 "$1" | tail -n 200 | jq -R -s 'split("\n") | map(fromjson? | select(.type)) | last | .type' >/dev/null
EOF

HF=(hyperfine -N --style none)
median_ms() { jq -r ".results[$2].median * 1000" "$1"; }
max_ms() { jq -r ".results[$2].max * 1000" "$1"; }
fmt() { awk -v x="$1" 'BEGIN { if (x >= 100) printf "%.0f ms", x; else if (x >= 10) printf "%.1f ms", x; else printf "%.2f ms", x }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; if (r >= 100) printf "%.0f×", r; else printf "%.1f×", r }'; }

ROWS=()
row() { ROWS+=("| $1 | $2 | $3 | $4 | $5 |"); }

# ---- (a) one transcript --------------------------------------------------------------------
for mb in $SIZES_MB; do
    f=$DATA/claude-${mb}mb.jsonl
    label="classify, ${mb} MB"
    [[ $mb == 1024 ]] && label="classify, 1 GB"
    echo "compare: $label" >&2
    "${HF[@]}" --warmup 3 --runs 30 --export-json "$OUT/classify-${mb}.json" \
        -n ours "$BIN classify $f" \
        -n window "sh $WORK/window.sh $f" >&2
    ours=$(median_ms "$OUT/classify-${mb}.json" 0)
    window=$(median_ms "$OUT/classify-${mb}.json" 1)
    if ((mb <= 100)); then
        runs=10
        ((mb >= 100)) && runs=3
        "${HF[@]}" --warmup 1 --runs $runs --export-json "$OUT/full-${mb}.json" \
            -n "jq -s" "sh $WORK/jq-full.sh $f" >&2
        full=$(median_ms "$OUT/full-${mb}.json" 0)
        full_name='full parse (`jq -s`)'
        full_txt=$(fmt "$full")
    else
        # jq -s would hold the whole file in memory (many GB): stream it instead, once.
        "${HF[@]}" --warmup 0 --runs 1 -i --export-json "$OUT/full-${mb}.json" \
            -n "jq stream" "sh $WORK/jq-stream.sh $f $JQ_TIMEOUT" >&2
        full=$(median_ms "$OUT/full-${mb}.json" 0)
        full_name='full parse (`jq -c` streaming, 1 run)'
        full_txt=$(fmt "$full")
        if awk -v x="$full" -v t="$JQ_TIMEOUT" 'BEGIN { exit !(x >= t * 1000) }'; then
            full_txt=">${JQ_TIMEOUT} s"
            more=">"
        fi
    fi
    row "$label" "$(fmt "$ours")" "$full_name" "$full_txt" "${more:-}$(ratio "$full" "$ours")"
    more=""
    row "$label" "$(fmt "$ours")" "Agent Island window (128 KiB / 200 lines, jq)" "$(fmt "$window")" "$(ratio "$window" "$ours")"
done

# ---- (b) status over N panes ---------------------------------------------------------------
# Which command is the status line's: `status` once it is built, else `panes`.
OURS_CMD=status
if ! "$BIN" -L "$SERVER" status >/dev/null 2>&1; then
    OURS_CMD=panes
fi

cat >"$WORK/capture-poll.sh" <<EOF
# What status-line scripts do today: every pane's screen, grepped for agent prompts.
for p in \$(tmux -L $SERVER list-panes -a -F '#{pane_id}'); do
    tmux -L $SERVER capture-pane -p -t "\$p" | grep -cE 'esc to interrupt|Do you want to proceed|Allow command|❯|›' >/dev/null || true
done
EOF

for n in $PANES; do
    bench_add_agents "$n"
    echo "compare: $n panes" >&2
    "${HF[@]}" --warmup 3 --runs 30 --export-json "$OUT/panes-${n}.json" \
        -n ours "$BIN -L $SERVER $OURS_CMD" \
        -n capture "sh $WORK/capture-poll.sh" >&2
    ours=$(median_ms "$OUT/panes-${n}.json" 0)
    cap=$(median_ms "$OUT/panes-${n}.json" 1)
    word=panes
    ((n == 1)) && word=pane
    row "\`$OURS_CMD\`, $n $word" "$(fmt "$ours")" "capture-pane polling ($((n + 2)) tmux calls + grep)" "$(fmt "$cap")" "$(ratio "$cap" "$ours")"
done

{
    echo "| work | agentpane (median) | naive approach | naive (median) | agentpane is cheaper by |"
    echo "|---|---:|---|---:|---:|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "Machine: $(bench_machine), $(jq --version), hyperfine $(hyperfine --version | cut -d' ' -f2)."
} | tee "$OUT/compare.md"
