//! `interpreter`: the command line. It parses arguments and hands them to a face crate.

mod cli;
mod hooks;
mod login;
mod mcp;
mod otel;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Reading config.toml starts no thread.
    let keys = interpreter_core::config::process_keys(&args);
    // SAFETY: first thing in main, before the runtime, logging or anything else can start a
    // thread: nothing else reads the environment while it is changed.
    unsafe { interpreter_core::secrets::protect_process(&keys) };
    std::process::exit(cli::main());
}
