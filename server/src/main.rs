fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // SAFETY: first thing in main, before the runtime, logging or anything else can start a
    // thread: nothing else reads the environment while it is changed.
    unsafe { interpreter::secrets::protect_process(&args) };
    std::process::exit(interpreter::cli::main());
}
