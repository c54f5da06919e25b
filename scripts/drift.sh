#!/usr/bin/env bash
# Drift check: installs the newest published release of each agent client, runs the same
# real-client scenarios against it as against the pinned ones, and prints a table
# version × scenario → pass/fail. Not part of CI's pass/fail: it is how a change in what a
# client writes is seen the day the release ships.
#
#   scripts/drift.sh              # newest of every agent in tests/real/clients.txt
#   scripts/drift.sh claude       # one agent
#   PINNED=1 scripts/drift.sh     # the pinned versions instead of the newest
set -euo pipefail
cd "$(dirname "$0")/.."
agents=("$@")
pins=tests/real/clients.txt
[ ${#agents[@]} -gt 0 ] || mapfile -t agents < <(grep -vE '^\s*(#|$)' "$pins" | awk '{print $1}' | sort -u)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
table="$work/table"
: >"$table"

for agent in "${agents[@]}"; do
    package=$(grep -vE '^\s*(#|$)' "$pins" | awk -v a="$agent" '$1 == a {print $3; exit}')
    [ -n "$package" ] || { echo "drift: $agent is not in $pins" >&2; exit 2; }
    if [ -n "${PINNED:-}" ]; then
        versions=$(grep -vE '^\s*(#|$)' "$pins" | awk -v a="$agent" '$1 == a {print $2}')
    else
        versions=$(npm view "$package" version)
    fi
    for version in $versions; do
        list="$work/$agent@$version.txt"
        echo "$agent $version $package" >"$list"
        bash scripts/install-clients.sh "$list" >&2
        echo "drift: $agent $version" >&2
        log="$work/$agent@$version.log"
        AGENTPANE_CLIENTS_FILE="$list" CI=true cargo test --test "real_$agent" -- \
            --test-threads=2 >"$log" 2>&1 || true
        grep -E '^test .* \.\.\. (ok|FAILED|ignored)$' "$log" |
            sed -E 's/^test ([^ ]+) \.\.\. (ok|FAILED|ignored)$/\1 \2/' |
            while read -r scenario result; do
                printf '%s\t%s\t%s\n' "$agent $version" "$scenario" "$result" >>"$table"
            done
        if ! grep -qE '^test .* \.\.\. ' "$log"; then
            printf '%s\t%s\t%s\n' "$agent $version" "(build or start-up)" "FAILED" >>"$table"
            tail -20 "$log" >&2
        fi
    done
done

printf '| client | scenario | result |\n|---|---|---|\n'
sort "$table" | awk -F'\t' '{printf "| %s | %s | %s |\n", $1, $2, ($3 == "ok" ? "pass" : $3)}'
