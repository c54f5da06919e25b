# Shared by the scripts/*-cost.sh, scripts/compare.sh and scripts/watcher-kinds.sh (sourced,
# not run): tools, a release build, and a private tmux server with fake agents in a temporary
# world.
#
# After `bench_world`: $ROOT, $BIN (release agentpane), $WORK (temp folder, removed on exit),
# $SERVER (the private server's -L name, killed on exit), and HOME / AGENTPANE_STATE_DIR /
# CLAUDE_CONFIG_DIR / CODEX_HOME exported into $WORK so nothing touches the real home.
# $WORK/bin holds a fake of every agent kind: symlinks to the release build. $BENCH_BIN
# replaces the agentpane measured (an older build, measured against today's fakes) and
# $BENCH_FAKE_BIN the fakes' binary.

bench_need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "bench: installing $2" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
}

bench_build() {
    echo "bench: release build" >&2
    cargo build --release --quiet
    BIN=${BENCH_BIN:-$ROOT/target/release/agentpane}
    FAKE_BIN=${BENCH_FAKE_BIN:-$ROOT/target/release/agentpane}
}

bench_cleanup() {
    if [[ -n ${BENCH_PIDS:-} ]]; then
        # Only processes this script started, by pid.
        kill $BENCH_PIDS >/dev/null 2>&1 || true
    fi
    tmux -L "$SERVER" kill-server >/dev/null 2>&1 || true
    # tmux leaves its socket file behind after kill-server.
    [[ -n ${BENCH_SOCKET:-} ]] && rm -f "$BENCH_SOCKET"
    rm -rf "$WORK"
}

bench_world() {
    WORK=$(mktemp -d)
    SERVER=agentpane-bench-$$
    BENCH_PIDS=""
    trap bench_cleanup EXIT
    export HOME=$WORK/home AGENTPANE_STATE_DIR=$WORK/state XDG_STATE_HOME=$WORK/state
    export CLAUDE_CONFIG_DIR=$WORK/claude CODEX_HOME=$WORK/codex SHELL=/bin/sh
    unset TMUX TMUX_PANE
    mkdir -p "$HOME" "$AGENTPANE_STATE_DIR" "$CLAUDE_CONFIG_DIR" "$CODEX_HOME" "$WORK/bin"
    local kind
    for kind in claude codex gemini opencode qwen copilot kilo pi amp aider; do
        ln -s "${FAKE_BIN:-$BIN}" "$WORK/bin/$kind"
    done
    T=(tmux -L "$SERVER" -f /dev/null)
    "${T[@]}" new-session -d -s main -x 200 -y 50 -c "$WORK"
    BENCH_SOCKET=$("${T[@]}" display-message -p '#{socket_path}')
    # The plugin's focus hook (tmux/agentpane.tmux): with it the watcher's safety poll asks
    # tmux only when /proc or a pane's terminal says something changed.
    "${T[@]}" set-hook -g 'session-window-changed[4242]' "run-shell -b \"'$BIN' nudge\""
    BENCH_AGENTS=0
}

# bench_add_agents N: fake agents until there are N (even: Claude Code, odd: Codex), each
# replaying a real fixture in its own folder, then waits until all resolve to a transcript.
bench_add_agents() {
    local n=$1 agent fixture dir got=0
    while ((BENCH_AGENTS < n)); do
        if ((BENCH_AGENTS % 2 == 0)); then
            agent=claude fixture=$ROOT/fixtures/real/claude/marot-spotter/short.jsonl
        else
            agent=codex fixture=$ROOT/fixtures/real/codex/kvsankar-agent-history/session-01.jsonl
        fi
        dir=$WORK/work/p$BENCH_AGENTS
        mkdir -p "$dir"
        "${T[@]}" new-window -d -t main: -c "$dir" -e "AGENTPANE_FAKE_AGENT=$fixture" "$WORK/bin/$agent"
        BENCH_AGENTS=$((BENCH_AGENTS + 1))
    done
    echo "bench: waiting for $n agents" >&2
    for _ in $(seq 1 600); do
        got=$(bench_resolved)
        ((got == n)) && return 0
        sleep 0.2
    done
    echo "bench: only $got of $n agents resolved" >&2
    return 1
}

bench_resolved() {
    "$BIN" -L "$SERVER" panes --json 2>/dev/null |
        jq '[.[] | select(.transcript != null)] | length' 2>/dev/null || echo 0
}

bench_machine() {
    echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')," \
        "shared), $(free -g | awk '/^Mem:/ {print $2}') GB RAM, load average" \
        "$(cut -d' ' -f1-3 /proc/loadavg) at the end; $(tmux -V)"
}
