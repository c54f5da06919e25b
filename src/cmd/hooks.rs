use anyhow::{bail, Result};

use crate::cli::{HookArgs, HooksCommand};

pub fn hook(_args: HookArgs) -> Result<i32> {
    bail!("hook is not built yet")
}

pub fn hooks(_cmd: HooksCommand) -> Result<i32> {
    bail!("hooks is not built yet")
}
