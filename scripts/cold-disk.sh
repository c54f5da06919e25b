#!/usr/bin/env bash
# Runs the real-client test binaries as a fresh CI machine first runs them: page cache
# dropped, and every read from the disk that holds the clients throttled to $RATE MB/s
# (default 16) through the blkio cgroup. Needs root and cgroup v1 blkio or cgroup v2 io.
#   scripts/cold-disk.sh [test-binary-name...]   (default: every real_* binary)
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${RATE:-16}
clients=${AGENTPANE_CLIENTS:-$HOME/.cache/agentpane-clients}
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(real_claude real_codex real_gemini real_opencode real_mixed)

# The whole disk under the clients (throttles apply to disks, not partitions).
source=$(findmnt -no SOURCE --target "$clients")
disk=$(lsblk -no PKNAME "$source" 2>/dev/null | head -1)
device=$(lsblk -dno MAJ:MIN "/dev/${disk:-${source#/dev/}}" | tr -d ' ')
bps=$((rate * 1024 * 1024))
if [ -d /sys/fs/cgroup/blkio ]; then
    group=/sys/fs/cgroup/blkio/agentpane-cold-disk
    mkdir -p "$group"
    echo "$device $bps" >"$group/blkio.throttle.read_bps_device"
else
    group=/sys/fs/cgroup/agentpane-cold-disk
    echo +io >/sys/fs/cgroup/cgroup.subtree_control
    mkdir -p "$group"
    echo "$device rbps=$bps" >"$group/io.max"
fi
echo "cold-disk: reads from $device at $rate MB/s, cache dropped before each binary"

cargo test --no-run --tests 2>/dev/null
status=0
for name in "${tests[@]}"; do
    bin=$(ls -t target/debug/deps/"$name"-* | grep -v '\.d$' | head -1)
    sync
    echo 3 >/proc/sys/vm/drop_caches
    # The test binary and agentpane itself load at full speed: the clients are the subject.
    cat "$bin" target/debug/agentpane target/debug/fake-agent* >/dev/null 2>&1 || true
    start=$(date +%s)
    if sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$group" env CI=true "$bin" \
        >"target/cold-disk-$name.log" 2>&1; then
        result=ok
    else
        result=FAILED
        status=1
    fi
    echo "cold-disk: $name $result in $(($(date +%s) - start)) s (log: target/cold-disk-$name.log)"
done
rmdir "$group" 2>/dev/null || true
exit $status
