//! `AGENTPANE_SKIP_REAL=1` builds the real-client tests (`tests/real_*.rs`) as ignored, so a
//! run that opts out of the released clients counts them as ignored rather than passed.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AGENTPANE_SKIP_REAL");
    println!("cargo::rustc-check-cfg=cfg(skip_real)");
    let skip = std::env::var("AGENTPANE_SKIP_REAL").unwrap_or_default();
    if !matches!(skip.trim(), "" | "0" | "false") {
        println!("cargo:rustc-cfg=skip_real");
    }
}
