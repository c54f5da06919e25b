fn main() {
    std::process::exit(agentpane::run(std::env::args_os()));
}
