#!/usr/bin/env bash
# agentpane — tmux plugin (TPM-compatible).
#
# In ~/.tmux.conf:
#   set -g @plugin 'OWNER/agentpane'          # or: run-shell /path/to/agentpane/tmux/agentpane.tmux
#   set -g status-right '#{agentpane_status} %H:%M'
#   set -g window-status-format '#I:#W#{agentpane_window_status}'
#   set -g window-status-current-format '#I:#W#{agentpane_window_status}'   # the focused window
#
# The placeholders are rewritten into the user options the watcher keeps up to date
# (`#{@agentpane_status}`, `#{@agentpane_window_status}`), so the status line spawns nothing.
# With `set -g @agentpane-watch off` they become `#(agentpane status)` calls instead.
#
# Options (all optional):
#   @agentpane-bin            path to the agentpane binary (default: PATH, then the plugin's
#                             target/release/agentpane)
#   @agentpane-watch          on|off: start the watcher (default on)
#   @agentpane-format         segment format, e.g. '{working} {your_turn} {attention}'
#   @agentpane-icons          icon overrides, e.g. 'working=W,your-turn=Y'
#   @agentpane-window-prefix  text before the window glyph (default: a space)
#   @agentpane-poll           watcher safety poll in seconds (default 5)
#   @agentpane-alert-command  shell command (sh -c) receiving each alert as JSON on stdin
#   @agentpane-bell           on|off (default on)
#   @agentpane-notify         on|off: desktop notifications via notify-send (default on)
#   @agentpane-message        on|off: alerts via display-message (default on)
#   @agentpane-jump-key       key (after the prefix) jumping to the most urgent pane (default A)
#   @agentpane-route-key      key opening the menu that routes this pane's answer (default R)
#   @agentpane-last-key       key showing this pane's last answer in a popup (default P)
#   @agentpane-picker-key     key opening the picker of all agent panes in a popup (default S)
#
# Each key option accepts `off` to leave that key alone. Every key runs agentpane through
# `run-shell -b` (which expands #{pane_id} and #{client_name}; display-popup's command is never
# expanded): agentpane opens the menu or popup on that client itself, says "nothing to do" in
# one status-line message, and its exit status is dropped so tmux shows no "returned N" view.

CURRENT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

get_option() {
	local value
	value="$(tmux show-option -gqv "$1")"
	if [ -n "$value" ]; then printf '%s' "$value"; else printf '%s' "$2"; fi
}

find_binary() {
	local configured candidate
	configured="$(get_option @agentpane-bin "")"
	if [ -n "$configured" ] && [ -x "$configured" ]; then
		printf '%s' "$configured"
		return 0
	fi
	if command -v agentpane >/dev/null 2>&1; then
		command -v agentpane
		return 0
	fi
	for candidate in "$CURRENT_DIR/../target/release/agentpane" "$CURRENT_DIR/target/release/agentpane"; do
		if [ -x "$candidate" ]; then
			printf '%s' "$candidate"
			return 0
		fi
	done
	return 1
}

# Quotes one argument for the shell that run-shell and #() use.
q() { printf '%q' "$1"; }

# Replaces each placeholder in a status/window option by its value, as tmux-cpu and
# tmux-battery do.
interpolate_option() {
	local option="$1" status_value="$2" window_value="$3" value
	value="$(tmux show-option -gqv "$option")"
	[ -n "$value" ] || return 0
	local new="${value//'#{agentpane_status}'/$status_value}"
	new="${new//'#{agentpane_window_status}'/$window_value}"
	if [ "$new" != "$value" ]; then
		tmux set-option -gq "$option" "$new"
	fi
}

main() {
	local bin socket watch format icons prefix poll
	if ! bin="$(find_binary)"; then
		tmux display-message "agentpane: binary not found (set @agentpane-bin or put agentpane on PATH)"
		return 0
	fi
	socket="$(tmux display-message -p '#{socket_path}')"
	watch="$(get_option @agentpane-watch on)"
	format="$(get_option @agentpane-format "")"
	icons="$(get_option @agentpane-icons "")"
	prefix="$(get_option @agentpane-window-prefix " ")"
	poll="$(get_option @agentpane-poll 5)"

	local look=()
	[ -n "$format" ] && look+=(--format "$format")
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
		local alert_command
		alert_command="$(get_option @agentpane-alert-command "")"
		[ -n "$alert_command" ] && flags+=(--alert-command "$alert_command")
		[ "$(get_option @agentpane-bell on)" = "off" ] && flags+=(--no-bell)
		[ "$(get_option @agentpane-notify on)" = "off" ] && flags+=(--no-notify)
		[ "$(get_option @agentpane-message on)" = "off" ] && flags+=(--no-message)
		local flags_q=""
		for arg in "${flags[@]}"; do flags_q+=" $(q "$arg")"; done
		# One watcher per server: a second one (plugin re-sourced) sees the lock and exits 0.
		# Its log is in the state folder (watch.log); run-shell must not show output.
		tmux run-shell -b "$base watch$flags_q$look_q >/dev/null 2>&1"
	fi

	if [ "$watch" = "on" ]; then
		# Switching to a pane acknowledges its alert, and a pane that opens or closes may hold
		# an agent: wake the watcher at once rather than at its next safety poll (between
		# these, a write to an agent's log is all it reads again; it asks tmux for the panes
		# only then). Indexed hooks leave the user's own hooks alone.
		local hook
		for hook in after-select-pane session-window-changed client-session-changed \
			after-new-window after-split-window after-kill-pane \
			pane-exited window-unlinked session-closed; do
			tmux set-hook -g "${hook}[4242]" "run-shell -b \"$base nudge >/dev/null 2>&1 || true\""
		done
	fi

	local key
	key="$(get_option @agentpane-jump-key A)"
	if [ -n "$key" ] && [ "$key" != "off" ]; then
		tmux bind-key "$key" run-shell -b "$base jump --client '#{client_name}' >/dev/null 2>&1 || true"
	fi
	# Route the focused pane's answer: a display-menu of the other agent panes with their state.
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
}

main
