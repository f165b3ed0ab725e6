//! The `orkestrel-mcp` binary's root: the command line (`main.rs`) on native targets, and an
//! empty `main` on wasm32, so `cargo check --all-features --target wasm32-unknown-unknown`
//! builds.

#[cfg(not(target_arch = "wasm32"))]
#[path = "main.rs"]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
