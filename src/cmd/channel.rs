use anyhow::{bail, Result};

use crate::cli::ChannelCommand;

pub fn run(_cmd: ChannelCommand) -> Result<i32> {
    bail!("channel is not built yet")
}
