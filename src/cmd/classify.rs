use anyhow::{bail, Result};

use crate::cli::ClassifyArgs;

pub fn run(_args: ClassifyArgs) -> Result<i32> {
    bail!("classify is not built yet")
}
