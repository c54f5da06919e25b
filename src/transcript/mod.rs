//! Reading transcripts: backwards from the end for the current state, forwards from an offset
//! for watch mode.
