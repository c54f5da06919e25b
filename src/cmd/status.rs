use anyhow::{bail, Result};

use super::Context;
use crate::cli::{PaneStatusArgs, StatusArgs};

pub fn status(_args: StatusArgs, _ctx: &Context) -> Result<i32> {
    bail!("status is not built yet")
}

pub fn pane_status(_args: PaneStatusArgs, _ctx: &Context) -> Result<i32> {
    bail!("pane-status is not built yet")
}
