use anyhow::{bail, Result};

use super::Context;
use crate::cli::DemoArgs;

pub fn run(_args: DemoArgs, _ctx: &Context) -> Result<i32> {
    bail!("demo is not built yet")
}
