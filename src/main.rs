//! The `code-intel` binary: tracing to stderr, the async runtime, and the
//! exit code of the command `code_intel::cli` runs. Commands live in
//! `src/cli/`.

use code_intel::cli;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CODE_INTEL_LOG")
                .unwrap_or_else(|_| "code_intel=info,warn".into()),
        )
        .with_ansi(false)
        .init();
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(cli::run(cli));
    // A model load or sync still running on the blocking pool must not keep
    // the process alive after the client has gone.
    runtime.shutdown_timeout(Duration::from_millis(500));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
