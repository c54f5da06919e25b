#!/usr/bin/env bash
# What a remote host costs the local watcher (docs/benchmarks.md#remote-hosts): a private sshd
# on 127.0.0.1 (temporary keys and configs, as tests/remote.rs), a "remote host" that is a
# second private tmux server with its own HOME and state folder and AGENTS (10) idle fake
# agents, and the local server with AGENTS idle fakes. Over IDLE_SECS (60) seconds of nothing
# happening it measures, from /proc:
#
#   1. the local watcher without hosts (the baseline);
#   2. the local watcher with `--host devbox`: its threads (schedstat, ns) plus the processes
#      it spawned and reaped (cutime+cstime), the ssh client of its link, and its wakes;
#   3. the remote side of the link: `agentpane serve` there;
#   4. as 2, with a relay between a remote agent and a local one registered in the watcher
#      (both idle: nothing to relay, the relay only waits).
#
# Then a broken host, `flood`, that streams documents (AGENTS panes each, two that differ)
# as fast as ssh takes them, for FLOOD_SECS (30) seconds: the watcher's CPU, its memory
# before and after, its ssh link's CPU, and how long SIGTERM takes to end it.
#
#   scripts/watcher-remote.sh
#   AGENTS=4 IDLE_SECS=20 scripts/watcher-remote.sh      # a quick look
#   ROWS=flood scripts/watcher-remote.sh                 # the flooding host only
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
AGENTS=${AGENTS:-10}
IDLE_SECS=${IDLE_SECS:-60}
FLOOD_SECS=${FLOOD_SECS:-30}
ROWS=${ROWS:-idle flood}

. scripts/bench-lib.sh
bench_need jq jq
bench_need tmux tmux
[[ -x /usr/sbin/sshd ]] || bench_need sshd openssh-server
bench_build
bench_world
HZ=$(getconf CLK_TCK)

# The remote world: its own folders and tmux server.
R=$WORK/remote
mkdir -p "$R/home" "$R/state" "$R/claude" "$R/codex" "$R/ssh/bin"
RSERVER=$SERVER-remote
RT=(env HOME="$R/home" AGENTPANE_STATE_DIR="$R/state" XDG_STATE_HOME="$R/state"
    CLAUDE_CONFIG_DIR="$R/claude" CODEX_HOME="$R/codex" tmux -L "$RSERVER" -f /dev/null)
"${RT[@]}" new-session -d -s main -x 200 -y 50 -c "$R/home"
RSOCKET=$("${RT[@]}" display-message -p '#{socket_path}')
for i in $(seq 1 "$AGENTS"); do
    mkdir -p "$R/work/p$i"
    "${RT[@]}" new-window -d -t main: -c "$R/work/p$i" \
        -e "AGENTPANE_FAKE_AGENT=$ROOT/fixtures/real/claude/marot-spotter/short.jsonl" "$WORK/bin/claude"
done

# sshd and the client config (nothing of the system's or ~/.ssh).
S=$R/ssh
ssh-keygen -q -t ed25519 -N "" -f "$S/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$S/id"
cp "$S/id.pub" "$S/authorized_keys"
echo "bench-host $(cut -d' ' -f1-2 "$S/host_key.pub")" >"$S/known_hosts"
ln -s "$BIN" "$S/bin/agentpane"
mkdir -p "$S/tmux/tmux-$(id -u)" && chmod 700 "$S/tmux/tmux-$(id -u)"
ln -s "$RSOCKET" "$S/tmux/tmux-$(id -u)/default"
cat >"$S/remote.sh" <<EOF
#!/bin/sh
export HOME='$R/home' AGENTPANE_STATE_DIR='$R/state' XDG_STATE_HOME='$R/state'
export CLAUDE_CONFIG_DIR='$R/claude' CODEX_HOME='$R/codex' TMUX_TMPDIR='$S/tmux'
export PATH='$S/bin':"\$PATH"
unset TMUX
if [ -n "\$AGENTPANE_BENCH_FLOOD" ]; then exec yes "\$(cat '$S/flood.jsonl')"; fi
exec sh -c "\$SSH_ORIGINAL_COMMAND"
EOF
flood_doc() { # flood_doc STATE: a document of AGENTS panes in STATE
    local i panes=""
    for i in $(seq 1 "$AGENTS"); do
        panes+="${panes:+,}{\"pane_id\":\"%$i\",\"target\":\"main:$i.0\",\"agent\":\"claude\",\"state\":\"$1\",\"seen\":false,\"reason\":null,\"at\":null,\"resets_at\":null}"
    done
    printf '{"schema":2,"agentpane":"0.1.0","panes":[%s]}' "$panes"
}
{ flood_doc working; echo; flood_doc idle; } >"$S/flood.jsonl"
chmod 755 "$S/remote.sh"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$S/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $S/host_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin yes
ForceCommand $S/remote.sh
AcceptEnv AGENTPANE_BENCH_FLOOD
LogLevel ERROR
EOF
cat >"$S/ssh_config" <<EOF
Host devbox
  HostName 127.0.0.1
  Port $PORT
  User $(id -un)
  IdentityFile $S/id
  IdentitiesOnly yes
  HostKeyAlias bench-host
  UserKnownHostsFile $S/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
Host flood
  HostName localhost
  Port $PORT
  User $(id -un)
  IdentityFile $S/id
  IdentitiesOnly yes
  HostKeyAlias bench-host
  UserKnownHostsFile $S/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  SetEnv AGENTPANE_BENCH_FLOOD=1
EOF
mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$S/sshd_config" &
SSHD=$!
BENCH_PIDS="$SSHD"
export AGENTPANE_SSH_CONFIG=$S/ssh_config XDG_RUNTIME_DIR=$WORK/run
mkdir -p "$XDG_RUNTIME_DIR"
cleanup_remote() {
    # Only what this script started, by pid: the watcher, sshd and the sessions below it.
    local pids
    pids=$(ps -o pid= --ppid "$SSHD" 2>/dev/null || true)
    kill ${WATCHER:-} $pids "$SSHD" >/dev/null 2>&1 || true
    "${RT[@]}" kill-server >/dev/null 2>&1 || true
    rm -f "$RSOCKET"
    bench_cleanup
}
trap cleanup_remote EXIT

bench_add_agents "$AGENTS"

cpu() { # "<ns on CPU, all threads> <ticks of reaped children>"
    echo "$(cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }')" \
        "$(awk '{ print $16 + $17 }' "/proc/$1/stat")"
}
cpu_tree() { # ns on CPU of PID's threads, by ticks for its children (live ssh clients)
    local total=0 p
    for p in "$@"; do
        [[ -r /proc/$p/stat ]] || continue
        total=$((total + $(cat /proc/"$p"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }')))
    done
    echo "$total"
}
wakes() {
    kill -USR1 "$WATCHER"
    sleep 0.5
    cat "$AGENTPANE_STATE_DIR"/servers/*/watch.log | grep 'counters:' | tail -1 | sed -E 's/.*wakes ([0-9]+).*/\1/'
}

measure() { # measure LABEL [watch flags…]: one row
    local label=$1 a b w0 w1 own kids links0 links1 serve0 serve1 serve links
    shift
    "$BIN" -L "$SERVER" watch --no-bell --no-notify --no-message "$@" 2>/dev/null &
    WATCHER=$!
    for _ in $(seq 1 300); do
        [[ -n $(tmux -L "$SERVER" show -gv @agentpane_status 2>/dev/null) ]] && break
        sleep 0.1
    done
    if [[ $label == *relay* ]]; then
        # A relay between the last remote agent and the last local one, once the watcher's
        # link to devbox is up (the command refuses a host the watcher does not reach yet).
        local lp rp
        lp=$("${T[@]}" list-panes -a -F '#{pane_id}' | tail -1)
        rp=$("${RT[@]}" list-panes -a -F '#{pane_id}' | tail -1)
        for _ in $(seq 1 100); do
            "$BIN" -L "$SERVER" --host devbox relay "devbox:$rp" "$lp" 2>/dev/null && break
            sleep 0.2
        done
        ls "$AGENTPANE_STATE_DIR/relays/"*.json >/dev/null || { echo "no relay registered" >&2; exit 1; }
    fi
    sleep 5
    local ssh_pids serve_pid
    # The link's ssh (a child) and the shared connection's master (ssh forks it away).
    ssh_pids="$(ps -o pid= --ppid "$WATCHER" | tr '\n' ' ') $(ps -eo pid=,args= | awk '$2 == "ssh:" && /\[mux\]/ {print $1}' | tr '\n' ' ')"
    serve_pid=$(ps -eo pid=,args= | awk '$2 ~ /agentpane$/ && $3 == "serve" {print $1; exit}')
    a=$(cpu "$WATCHER")
    w0=$(wakes)
    links0=$(cpu_tree $ssh_pids)
    serve0=$(cpu_tree ${serve_pid:-})
    sleep "$IDLE_SECS"
    b=$(cpu "$WATCHER")
    w1=$(wakes)
    links1=$(cpu_tree $ssh_pids)
    serve1=$(cpu_tree ${serve_pid:-})
    own=$(((${b%% *} - ${a%% *}) / 1000000))
    kids=$(((${b##* } - ${a##* }) * 1000 / HZ))
    links=$(((links1 - links0) / 1000000))
    serve=$(((serve1 - serve0) / 1000000))
    awk -v l="$label" -v o="$own" -v k="$kids" -v s="$links" -v r="$serve" -v t="$IDLE_SECS" -v w=$((w1 - w0)) \
        'BEGIN { printf "| %s | %d ms + %d ms = %.3f %% | %d ms | %d ms (%.3f %%) | %d |\n",
            l, o, k, (o + k) / (t * 10), s, r, r / (t * 10), w }'
    kill "$WATCHER"
    wait "$WATCHER" 2>/dev/null || true
    WATCHER=""
}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

measure_flood() { # one row: the watcher with `--host flood`
    local a b own kids links0 links1 rss0 rss1 ssh_pids killer t0 t1
    "$BIN" -L "$SERVER" watch --no-bell --no-notify --no-message --host flood 2>/dev/null &
    WATCHER=$!
    for _ in $(seq 1 300); do
        [[ -n $(tmux -L "$SERVER" show -gv @agentpane_status 2>/dev/null) ]] && break
        sleep 0.1
    done
    sleep 5
    ssh_pids="$(ps -o pid= --ppid "$WATCHER" | tr '\n' ' ') $(ps -eo pid=,args= | awk '$2 == "ssh:" && /\[mux\]/ {print $1}' | tr '\n' ' ')"
    a=$(cpu "$WATCHER")
    rss0=$(rss_kib "$WATCHER")
    links0=$(cpu_tree $ssh_pids)
    sleep "$FLOOD_SECS"
    b=$(cpu "$WATCHER")
    rss1=$(rss_kib "$WATCHER")
    links1=$(cpu_tree $ssh_pids)
    own=$(((${b%% *} - ${a%% *}) / 1000000))
    kids=$(((${b##* } - ${a##* }) * 1000 / HZ))
    # SIGTERM, and how long until it has exited (given up after 60 s: SIGKILL).
    t0=$(date +%s%N)
    kill "$WATCHER"
    (sleep 60 && kill -KILL "$WATCHER" 2>/dev/null) &
    killer=$!
    wait "$WATCHER" 2>/dev/null || true
    t1=$(date +%s%N)
    kill "$killer" 2>/dev/null || true
    WATCHER=""
    awk -v o="$own" -v k="$kids" -v t="$FLOOD_SECS" -v r0="$rss0" -v r1="$rss1" \
        -v s=$(((links1 - links0) / 1000000)) -v q=$(((t1 - t0) / 1000000)) \
        'BEGIN { printf "| `--host flood` | %d ms + %d ms = %.1f %% | %.1f → %.1f MiB | %d ms (%.1f %%) | %d ms |\n",
            o, k, (o + k) / (t * 10), r0 / 1024, r1 / 1024, s, s / (t * 10), q }'
}

if [[ " $ROWS " == *" idle "* ]]; then
    echo
    echo "| local watcher, $AGENTS local + $AGENTS remote idle agents, ${IDLE_SECS} s | watcher + its tmux clients = % of a core | its ssh link (client) | remote \`serve\` | wakes |"
    echo "|---|---|---|---|---|"
    measure "no hosts"
    measure "\`--host devbox\`" --host devbox
    measure "\`--host devbox\` + a relay devbox:%N ⇄ %M" --host devbox
fi
if [[ " $ROWS " == *" flood "* ]]; then
    echo
    echo "| local watcher, $AGENTS local agents, a host streaming documents of $AGENTS panes as fast as ssh takes them, ${FLOOD_SECS} s | watcher + its tmux clients = % of a core | watcher memory (RSS) before → after | its ssh link (client) | SIGTERM → exit |"
    echo "|---|---|---|---|---|"
    measure_flood
fi
echo
echo "machine: $(bench_machine)"
