fn main() {
    std::process::exit(interpreter::cli::main());
}
