fn main() -> std::process::ExitCode {
    // Started as an attempt's zygote: serve it and nothing else.
    if let Some(code) = agent_runtime::zygote::serve_if_asked() {
        return code;
    }
    agent_runtime::cli::main()
}
