//! Where a codex process keeps its transcript.
