#!/usr/bin/env bash
# TPM entry point: TPM runs the *.tmux files at a plugin's top level. The plugin itself
# lives in tmux/agentpane.tmux.
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tmux/agentpane.tmux"
