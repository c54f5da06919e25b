use anyhow::{bail, Result};

use super::Context;
use crate::cli::{PanesArgs, ResolveArgs};

pub fn resolve(_args: ResolveArgs, _ctx: &Context) -> Result<i32> {
    bail!("resolve is not built yet")
}

pub fn panes(_args: PanesArgs, _ctx: &Context) -> Result<i32> {
    bail!("panes is not built yet")
}
