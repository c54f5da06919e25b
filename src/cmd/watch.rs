use anyhow::{bail, Result};

use super::Context;
use crate::cli::WatchArgs;

pub fn run(_args: WatchArgs, _ctx: &Context) -> Result<i32> {
    bail!("watch is not built yet")
}
