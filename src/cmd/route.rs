use anyhow::{bail, Result};

use super::Context;
use crate::cli::{RelayArgs, RouteArgs};

pub fn route(_args: RouteArgs, _ctx: &Context) -> Result<i32> {
    bail!("route is not built yet")
}

pub fn relay(_args: RelayArgs, _ctx: &Context) -> Result<i32> {
    bail!("relay is not built yet")
}
