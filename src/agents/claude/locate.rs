//! Where a claude process keeps its transcript.
