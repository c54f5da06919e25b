//! A model's context window as opencode (or Kilo) knows it: its config's
//! `provider.<id>.models.<model>.limit.context`, else the models.dev catalogue it keeps in its
//! cache folder (`models.json`, `<provider> → models → <model> → limit.context`). The database
//! names no window. A model found in neither is unknown.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::Flavor;
use crate::procfs;

/// The catalogue is a few megabytes; a larger file is not read.
const MAX_CATALOGUE: u64 = 16 << 20;

#[derive(Deserialize)]
struct Provider {
    #[serde(default)]
    models: HashMap<String, Model>,
}

#[derive(Deserialize)]
struct Model {
    limit: Option<Limit>,
}

#[derive(Deserialize)]
struct Limit {
    context: Option<u64>,
}

#[derive(Deserialize)]
struct Config {
    #[serde(default)]
    provider: HashMap<String, Provider>,
}

/// The window of `model` for the process `pid` (its XDG folders), `home` when it has none.
pub fn window(flavor: &Flavor, model: &str, pid: Option<u32>, home: &Path) -> Option<u64> {
    let (config, cache) = folders(flavor, pid, home);
    let configured = ["json", "jsonc"]
        .iter()
        .map(|ext| config.join(format!("{}.{ext}", flavor.name)))
        .chain([config.join("config.json")])
        .find_map(|file| {
            let text = std::fs::read(file).ok()?;
            let c: Config = serde_json::from_slice(&text).ok()?;
            in_providers(&c.provider, model)
        });
    configured.or_else(|| catalogued(&cache.join("models.json"), model))
}

fn in_providers(providers: &HashMap<String, Provider>, model: &str) -> Option<u64> {
    let mut found = providers
        .values()
        .filter_map(|p| p.models.get(model)?.limit.as_ref()?.context)
        .filter(|&w| w > 0);
    found.next()
}

fn catalogued(file: &Path, model: &str) -> Option<u64> {
    if std::fs::metadata(file).ok()?.len() > MAX_CATALOGUE {
        return None;
    }
    let text = std::fs::read(file).ok()?;
    let providers: HashMap<String, Provider> = serde_json::from_slice(&text).ok()?;
    in_providers(&providers, model)
}

/// Its config and cache folders: `<XDG_CONFIG_HOME or HOME/.config>/<name>` and
/// `<XDG_CACHE_HOME or HOME/.cache>/<name>`.
fn folders(flavor: &Flavor, pid: Option<u32>, home: &Path) -> (PathBuf, PathBuf) {
    let env = pid.and_then(procfs::environ);
    let get = |k: &str| {
        env.as_ref()
            .and_then(|e| e.get(k))
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = get("HOME").unwrap_or_else(|| home.to_path_buf());
    let config = get("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
    let cache = get("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
    (config.join(flavor.name), cache.join(flavor.name))
}

#[cfg(test)]
mod tests {
    use super::super::OPENCODE;
    use super::*;

    #[test]
    fn the_config_then_the_catalogue_give_the_window() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        assert_eq!(window(&OPENCODE, "stand-in", None, h), None, "nothing known");
        std::fs::create_dir_all(h.join(".config/opencode")).unwrap();
        std::fs::create_dir_all(h.join(".cache/opencode")).unwrap();
        std::fs::write(
            h.join(".cache/opencode/models.json"),
            r#"{"anthropic":{"id":"anthropic","models":{"claude-sonnet-4-5":{"id":"claude-sonnet-4-5","limit":{"context":200000,"output":64000},"cost":{"input":3}}}},
                "broken":{"models":{"x":{"limit":{"context":"big"}}}}}"#,
        )
        .unwrap();
        // A malformed entry makes the catalogue unreadable: unknown, never a panic.
        assert_eq!(window(&OPENCODE, "claude-sonnet-4-5", None, h), None);
        std::fs::write(
            h.join(".cache/opencode/models.json"),
            r#"{"anthropic":{"id":"anthropic","models":{"claude-sonnet-4-5":{"limit":{"context":200000}}}}}"#,
        )
        .unwrap();
        assert_eq!(
            window(&OPENCODE, "claude-sonnet-4-5", None, h),
            Some(200_000)
        );
        std::fs::write(
            h.join(".config/opencode/opencode.json"),
            r#"{"model":"standin/stand-in","provider":{"standin":{"npm":"@ai-sdk/openai-compatible","models":{"stand-in":{"name":"Stand-in","limit":{"context":32000,"output":4000}}}}}}"#,
        )
        .unwrap();
        assert_eq!(window(&OPENCODE, "stand-in", None, h), Some(32_000));
        let agent: &dyn crate::agents::Agent = &crate::agents::opencode::Opencode;
        assert_eq!(agent.context_window("stand-in", None, h), Some(32_000));
        assert_eq!(window(&OPENCODE, "unknown-model", None, h), None);
    }
}
