#!/usr/bin/env bash
# agentpane — tmux plugin (TPM-compatible).
#
# In ~/.tmux.conf:
#   set -g @plugin 'agentpane/agentpane'      # or: run-shell /path/to/agentpane/agentpane.tmux
#   set -g status-right '#{agentpane_status} %H:%M'
#   set -g window-status-format '#I:#W#{agentpane_window_status}'
#   set -g window-status-current-format '#I:#W#{agentpane_window_status}'   # the focused window
#
# The placeholders are rewritten into the user options the watcher keeps up to date
# (`#{@agentpane_status}`, `#{@agentpane_window_status}`), so the status line spawns nothing.
# With `set -g @agentpane-watch off` they become `#(agentpane status)` calls instead.
#
# Without a binary (a fresh TPM clone), the status segment says so until it is fixed, and each
# client that attaches is told how: with cargo on the tmux server's PATH the plugin builds its
# own checkout (`cargo build --release`, in the background, log in the state folder's
# build.log) and picks the binary up when the build ends; without cargo it names the ways to
# get one. Run again (prefix + I, or after an update) it rebuilds when the checkout's sources
# are newer than its binary, and the new binary's watcher replaces the old one.
#
# Options (all optional):
#   @agentpane-bin            path to the agentpane binary (default: PATH, then the plugin's
#                             target/release/agentpane, built by the plugin when cargo is there)
#   @agentpane-watch          on|off: start the watcher (default on)
#   @agentpane-format         segment format, e.g. '{working} {your_turn} {attention}'
#   @agentpane-icons          icon overrides, e.g. 'working=W,your-turn=Y'
#   @agentpane-window-prefix  text before the window glyph (default: a space)
#   @agentpane-limit-threshold   percent of a plan window's use from which {limit} shows it
#                                and an alert says so (default 50)
#   @agentpane-context-threshold percent of a pane's context from which an alert says so
#                                (default 80)
#   @agentpane-poll           watcher safety poll in seconds (default 5)
#   @agentpane-hosts          remote hosts whose agents to include, as ssh names them
#                             ('devbox gpu1'; the same agentpane must be on their PATH)
#   @agentpane-alert-command  shell command (sh -c) receiving each alert as JSON on stdin
#   @agentpane-bell           on|off (default on)
#   @agentpane-notify         on|off, or channels: 'terminal desktop ntfy webhook' (README,
#                             Notifications; the watcher reads them and their settings itself)
#   @agentpane-message        on|off: alerts via display-message (default on)
#   @agentpane-jump-key       key (after the prefix) jumping to the most urgent pane (default A)
#   @agentpane-route-key      key opening the menu that routes this pane's answer (default R)
#   @agentpane-last-key       key showing this pane's last answer in a popup (default P)
#   @agentpane-picker-key     key opening the picker of all agent panes in a popup (default S)
#   @agentpane-answer-key     key showing what the most urgent waiting pane asks, in a popup
#                             where y allows it once and n denies it (default off)
#   @agentpane-doctor-key     key running `agentpane doctor` on this server, its report in the
#                             pane (q closes); before there is a binary, what to do (default H)
#   @agentpane-web-key        key showing the phone page's URL and QR code in a popup (the page
#                             `agentpane web` or `@agentpane-web` serves; default W)
#
# Each key option accepts `off` to leave that key alone. Every key but the doctor key runs
# agentpane through `run-shell -b` (which expands #{pane_id} and #{client_name}; display-popup's
# command is never expanded): agentpane opens the menu or popup on that client itself, says
# "nothing to do" in one status-line message, and its exit status is dropped so tmux shows no
# "returned N" view. The doctor key's `run-shell` shows the report in the pane's view mode.

CURRENT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$CURRENT_DIR/.." && pwd)"
BUILT="$ROOT/target/release/agentpane"

get_option() {
	local value
	value="$(tmux show-option -gqv "$1")"
	if [ -n "$value" ]; then printf '%s' "$value"; else printf '%s' "$2"; fi
}

find_binary() {
	local configured
	configured="$(get_option @agentpane-bin "")"
	if [ -n "$configured" ] && [ -x "$configured" ]; then
		printf '%s' "$configured"
		return 0
	fi
	if command -v agentpane >/dev/null 2>&1; then
		command -v agentpane
		return 0
	fi
	if [ -x "$BUILT" ]; then
		printf '%s' "$BUILT"
		return 0
	fi
	return 1
}

# The state folder, by agentpane's own rule (`paths::state_dir`).
state_dir() {
	if [ -n "${AGENTPANE_STATE_DIR:-}" ]; then
		printf '%s' "$AGENTPANE_STATE_DIR"
	elif [ -n "${XDG_STATE_HOME:-}" ]; then
		printf '%s/agentpane' "$XDG_STATE_HOME"
	else
		printf '%s/.local/state/agentpane' "$HOME"
	fi
}

# Quotes one argument for the shell that run-shell and #() use.
q() { printf '%q' "$1"; }

# Replaces each placeholder in a status/window option by its value, as tmux-cpu and
# tmux-battery do. A status line left pointing at the hint (`#{@agentpane_status}`, no binary
# yet) gets the status value too.
interpolate_option() {
	local option="$1" status_value="$2" window_value="$3" value
	value="$(tmux show-option -gqv "$option")"
	[ -n "$value" ] || return 0
	local new="${value//'#{agentpane_status}'/$status_value}"
	[ -n "$window_value" ] && new="${new//'#{agentpane_window_status}'/$window_value}"
	new="${new//'#{@agentpane_status}'/$status_value}"
	if [ "$new" != "$value" ]; then
		tmux set-option -gq "$option" "$new"
	fi
}

# The key that checks the setup (`agentpane doctor`, or what is missing before there is a
# binary), and how a message names it.
doctor_key() { get_option @agentpane-doctor-key H; }
doctor_help() {
	local key
	key="$(doctor_key)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		printf 'prefix + %s' "$key"
	else
		printf 'tmux show -gv @agentpane_details'
	fi
}

# Says what is wrong where the user looks: in the status segment (until fixed), in one short
# message to the clients attached now and to each client that attaches later (a plugin
# loaded while tmux starts has no client yet, and a message then reaches no one), and in
# full (`details`, too long for a message line) behind the doctor key. A message a client
# was shown is also in its `show-messages`.
hint() {
	local status="$1" message="$2" details="$3" key
	tmux set-option -gq @agentpane_status "$status"
	tmux set-option -gq @agentpane_hint "$message"
	tmux set-option -gq @agentpane_details "$details"
	# Both `tmux attach` and the client that starts the server (`tmux`, `tmux new`, which
	# never "attaches") change session: one message each.
	tmux set-hook -g 'client-session-changed[4243]' 'display-message -d 15000 "#{@agentpane_hint}"'
	key="$(doctor_key)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell "tmux show-option -gqv @agentpane_details | fold -s -w 78"
	fi
	tell "$message"
}

# A message on each attached client, by name: a display-message with no client would land on
# the command client running this plugin (at tmux's start, the one starting the server) and
# hold it until the message times out.
tell() {
	local client
	# No session yet (the server reads its configuration): no client, and list-clients
	# would log an error in tmux's message log.
	has_session || return 0
	tmux list-clients -F '#{client_name}' 2>/dev/null | while IFS= read -r client; do
		tmux display-message -c "$client" -d 15000 "$1" 2>/dev/null || true
	done
}

# True once the server has a session: while tmux reads its configuration at its start, it
# has none, and commands that need one (list-clients, list-panes -a) fail.
has_session() {
	[ -n "$(tmux display-message -p '#{S:x}' 2>/dev/null)" ]
}

clear_hint() {
	tmux set-hook -gu 'client-attached[4243]'
	tmux set-hook -gu 'client-session-changed[4243]'
	tmux set-option -gqu @agentpane_hint
	tmux set-option -gqu @agentpane_details
	case "$(tmux show-option -gqv @agentpane_status)" in
	agentpane:*) tmux set-option -gqu @agentpane_status ;;
	esac
}

# True when the checkout's sources are newer than the binary built from them (an update).
stale_build() {
	[ -x "$BUILT" ] && [ -n "$(find "$ROOT/src" "$ROOT/Cargo.toml" "$ROOT/Cargo.lock" \
		-newer "$BUILT" -print -quit 2>/dev/null)" ]
}

# Starts `agentpane.tmux build` in the background: tmux keeps it running, and it runs the
# plugin again when the build ends.
start_build() {
	tmux set-option -gq @agentpane_build building
	tmux set-option -gq @agentpane_build_log "$(state_dir)/build.log"
	tmux run-shell -b "$(q "$CURRENT_DIR/agentpane.tmux") build >/dev/null 2>&1"
}

# `cargo build --release` in the checkout, one at a time (a lock folder holding the builder's
# pid), its output in the state folder's build.log; then the plugin again, which replaces a
# watcher of the old binary.
build() {
	local state log lock rc
	state="$(state_dir)"
	mkdir -p "$state" && chmod 700 "$state"
	log="$state/build.log"
	lock="$state/build.lock"
	if ! mkdir "$lock" 2>/dev/null; then
		kill -0 "$(cat "$lock/pid" 2>/dev/null)" 2>/dev/null && return 0
		rm -rf "$lock"
		mkdir "$lock" 2>/dev/null || return 0
	fi
	echo "$$" >"$lock/pid"
	echo "agentpane plugin: cargo build --release in $ROOT ($(date))" >"$log"
	(cd "$ROOT" && cargo build --release) >>"$log" 2>&1
	rc=$?
	rm -rf "$lock"
	if [ "$rc" -eq 0 ] && [ -x "$BUILT" ]; then
		echo "agentpane plugin: built $BUILT" >>"$log"
		tmux set-option -gqu @agentpane_build
		main --replace
		tell "agentpane: built $BUILT; $(doctor_help) checks the setup"
		return 0
	fi
	echo "agentpane plugin: the build failed (cargo exited $rc)" >>"$log"
	tmux set-option -gq @agentpane_build failed
	if [ -x "$BUILT" ]; then
		tell "agentpane: rebuilding after an update failed (log: $log); the old binary keeps running"
	else
		hint "agentpane: build failed — $(doctor_help)" \
			"agentpane: cargo build --release failed; $(doctor_help) says more" \
			"agentpane: cargo build --release failed in $ROOT; its log is $log. Fix what it says, then press prefix + I to build again."
	fi
}

# No binary: the hint, and the build when cargo can make one.
no_binary() {
	local status_option
	tmux set-option -gqu @agentpane_bin
	for status_option in status-left status-right; do
		interpolate_option "$status_option" '#{@agentpane_status}' ""
	done
	if command -v cargo >/dev/null 2>&1 && [ -f "$ROOT/Cargo.toml" ]; then
		hint "agentpane: building…" \
			"agentpane: no binary yet; building it with cargo in the background ($(doctor_help): where)" \
			"agentpane: no agentpane binary yet; building $ROOT with cargo in the background (log: $(state_dir)/build.log). The status line picks it up when done, and says so."
		start_build
	else
		tmux set-option -gqu @agentpane_build
		hint "agentpane: no binary — $(doctor_help)" \
			"agentpane: no agentpane binary and no cargo on the tmux server's PATH; $(doctor_help) says what to do" \
			"agentpane: no agentpane binary and no cargo on the tmux server's PATH. Either install Rust (https://rustup.rs), give tmux the new PATH (tmux set-environment -g PATH \"\$PATH\" in a new shell) and press prefix + I to build $ROOT; or install agentpane (cargo install --git https://github.com/agentpane/agentpane) and set -g @agentpane-bin /path/to/agentpane, then prefix + I."
	fi
}

main() {
	local bin socket watch format icons prefix poll replace="${1:-}"
	tmux set-option -gq @agentpane_plugin "$ROOT"
	if ! bin="$(find_binary)"; then
		no_binary
		return 0
	fi
	tmux set-option -gq @agentpane_bin "$bin"
	clear_hint
	# Not right after a build: a source dated in the future must not rebuild forever.
	if [ "$replace" != "--replace" ] && [ "$bin" = "$BUILT" ] &&
		command -v cargo >/dev/null 2>&1 && stale_build &&
		[ "$(tmux show-option -gqv @agentpane_build)" != building ]; then
		tell "agentpane: the checkout changed; rebuilding it in the background (log: $(state_dir)/build.log)"
		start_build
	fi
	socket="$(tmux display-message -p '#{socket_path}')"
	watch="$(get_option @agentpane-watch on)"
	format="$(get_option @agentpane-format "")"
	icons="$(get_option @agentpane-icons "")"
	prefix="$(get_option @agentpane-window-prefix " ")"
	poll="$(get_option @agentpane-poll 5)"

	local look=()
	[ -n "$format" ] && look+=(--format "$format")
	look+=(--limit-threshold "$(get_option @agentpane-limit-threshold 50)")
	[ -n "$icons" ] && look+=(--icons "$icons")
	local look_q="" icons_q="" arg
	for arg in "${look[@]}"; do look_q+=" $(q "$arg")"; done
	[ -n "$icons" ] && icons_q=" --icons $(q "$icons")"
	local base
	base="$(q "$bin") -S $(q "$socket")"

	local status_value window_value
	if [ "$watch" = "on" ]; then
		status_value='#{@agentpane_status}'
		window_value="#{?@agentpane_window_status,${prefix}#{@agentpane_window_status},}"
	else
		status_value="#($base status$look_q)"
		window_value="${prefix}#($base pane-status --window #{window_id}$icons_q)"
	fi
	local option
	for option in status-left status-right window-status-format window-status-current-format; do
		interpolate_option "$option" "$status_value" "$window_value"
	done

	if [ "$watch" = "on" ]; then
		local flags=(--poll "$poll")
		# After a build: the new binary's watcher takes over from the old one's. The same when
		# @agentpane-hosts changed: the watcher reads the hosts when it starts.
		local hosts
		hosts="$(get_option @agentpane-hosts "")"
		if [ "$replace" = "--replace" ]; then
			flags+=(--replace)
		elif [ "$hosts" != "$(tmux show-option -gqv @agentpane_hosts_watched)" ]; then
			flags+=(--replace)
		fi
		tmux set-option -gq @agentpane_hosts_watched "$hosts"
		local alert_command
		alert_command="$(get_option @agentpane-alert-command "")"
		[ -n "$alert_command" ] && flags+=(--alert-command "$alert_command")
		[ "$(get_option @agentpane-bell on)" = "off" ] && flags+=(--no-bell)
		[ "$(get_option @agentpane-notify on)" = "off" ] && flags+=(--no-notify)
		[ "$(get_option @agentpane-message on)" = "off" ] && flags+=(--no-message)
		flags+=(--context-threshold "$(get_option @agentpane-context-threshold 80)")
		local flags_q=""
		for arg in "${flags[@]}"; do flags_q+=" $(q "$arg")"; done
		# One watcher per server: a second one (plugin re-sourced) sees the lock and exits 0.
		# Its log is in the state folder (watch.log); run-shell must not show output.
		# At the server's start there is no session yet, and nothing to watch: the plugin
		# runs again when the first session is created, and starts it then.
		if has_session; then
			tmux set-hook -gu 'session-created[4244]'
			tmux run-shell -b "$base watch$flags_q$look_q >/dev/null 2>&1"
		else
			tmux set-hook -g 'session-created[4244]' \
				"run-shell -b \"$(q "$CURRENT_DIR/agentpane.tmux") >/dev/null 2>&1\""
		fi
	fi

	if [ "$watch" = "on" ]; then
		# Switching to a pane (or attaching to its session) acknowledges its alert, and a pane
		# that opens or closes may hold an agent: wake the watcher at once. Between these, a
		# write to an agent's log is all it reads again, and its safety poll asks tmux for the
		# panes only when /proc or a pane's terminal says something changed. Indexed hooks
		# leave the user's own hooks alone.
		local hook
		for hook in after-select-pane session-window-changed client-session-changed \
			client-attached client-detached after-new-window after-split-window \
			after-kill-pane pane-exited window-unlinked session-closed; do
			tmux set-hook -g "${hook}[4242]" "run-shell -b \"$base nudge >/dev/null 2>&1 || true\""
		done
	fi

	local key
	key="$(get_option @agentpane-jump-key A)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell -b "$base jump --client '#{client_name}' >/dev/null 2>&1 || true"
	fi
	# Route the focused pane's answer: a display-menu of the other agent panes with their state
	# (the picker when the menu would not fit the client: tmux would draw nothing).
	key="$(get_option @agentpane-route-key R)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell -b "$base route-menu '#{pane_id}' >/dev/null 2>&1 || true"
	fi
	# The focused pane's last answer in a popup (q or Escape closes).
	local here="--client '#{client_name}' --from '#{pane_id}'"
	key="$(get_option @agentpane-last-key P)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell -b "$base pick --popup $here --answer '#{pane_id}' >/dev/null 2>&1 || true"
	fi
	# Every agent pane, most urgent first: Enter jumps, r routes this pane there, p reads.
	key="$(get_option @agentpane-picker-key S)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell -b "$base pick --popup $here >/dev/null 2>&1 || true"
	fi
	# What the most urgent waiting pane asks, y/n to decide; off unless chosen.
	key="$(get_option @agentpane-answer-key off)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell -b "$base pick --popup $here --decide >/dev/null 2>&1 || true"
	fi
	# The phone page's URL, secret included, and its QR code, on this client only (never in a
	# tmux option or message); Enter closes.
	key="$(get_option @agentpane-web-key W)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" display-popup -E -w 80 -h 32 "$base web --url --qr; printf '(Enter closes)'; read -r _"
	fi
	# `agentpane doctor` on this server, its report in the pane's view mode (q closes): the
	# plugin's binary need not be on the shell's PATH.
	key="$(doctor_key)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell "$base doctor || true"
	fi
}

case "${1:-}" in
build) build ;;
*) main ;;
esac
