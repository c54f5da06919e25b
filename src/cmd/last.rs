use anyhow::{bail, Result};

use super::Context;
use crate::cli::LastArgs;

pub fn run(_args: LastArgs, _ctx: &Context) -> Result<i32> {
    bail!("last is not built yet")
}
