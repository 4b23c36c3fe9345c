//! `mock-llm`: serve a mock model script over HTTP on 127.0.0.1.
//!
//! ```text
//! mock-llm --script FILE [--port N] [--record FILE] [--port-file FILE] [--exit-on-stdin-eof]
//! ```
//!
//! Prints exactly one line to stdout, `MOCK_LISTENING http://127.0.0.1:PORT/v1`,
//! once listening; logs one line per request to stderr. Exits on SIGTERM/SIGINT,
//! or when stdin closes with `--exit-on-stdin-eof`.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use mock_llm::{MockServer, Script, ServerOptions};

#[derive(Debug, Parser)]
#[command(
    name = "mock-llm",
    about = "Scripted mock model server (Chat Completions, Responses and Anthropic Messages SSE)"
)]
struct Args {
    /// The JSON script of replies.
    #[arg(long)]
    script: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append every request to this file as JSONL.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Write the base URL (http://127.0.0.1:PORT/v1) to this file once listening.
    #[arg(long)]
    port_file: Option<PathBuf>,
    /// Exit when standard input is closed.
    #[arg(long)]
    exit_on_stdin_eof: bool,
}

fn main() {
    let args = Args::parse();
    let code = match run(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mock-llm: {e:#}");
            1
        }
    };
    // Exit right away: a pending blocking stdin read must not hold the process.
    std::process::exit(code);
}

fn run(args: Args) -> anyhow::Result<()> {
    let script = Script::from_file(&args.script)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let _guard = runtime.enter();
    let server = MockServer::start_with(
        script,
        ServerOptions {
            port: args.port,
            record_path: args.record.clone(),
            log: true,
        },
    )?;
    let url = server.url();
    if let Some(path) = &args.port_file {
        // Write then rename, so a reader polling for the file never sees it half-written.
        let tmp = path.with_extension("mock-llm-tmp");
        std::fs::write(&tmp, format!("{url}\n"))
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    }
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "MOCK_LISTENING {url}")?;
        stdout.flush()?;
    }
    eprintln!("mock-llm: listening on {url}");

    let reason = runtime.block_on(wait_for_exit(args.exit_on_stdin_eof))?;
    eprintln!("mock-llm: {reason}, shutting down");
    drop(server);
    Ok(())
}

async fn wait_for_exit(exit_on_stdin_eof: bool) -> anyhow::Result<&'static str> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let stdin_eof = async {
        if !exit_on_stdin_eof {
            return std::future::pending().await;
        }
        use tokio::io::AsyncReadExt as _;
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 1024];
        loop {
            match stdin.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    Ok(tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        () = stdin_eof => "stdin closed",
    })
}
