fn main() -> std::process::ExitCode {
    agent_runtime::cli::main()
}
