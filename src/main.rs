//! `archive`: the everblog command line. Parses arguments, sets up logging, runs the command,
//! and turns an error into one line on stderr and exit status 1.

use clap::Parser;
use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: HTML parsing allocates many small short-lived objects
/// (tendrils, attributes, nodes), and mimalloc makes `Page::parse` about 10 % faster
/// (benches/README.md, the article-extraction-benchmark run).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = everblog::cli::Cli::parse();
    // Commands that only print (`archive rules | head`) end quietly when their reader closes
    // the pipe, as `cat` does, instead of panicking in `println!`. Commands that talk to the
    // network keep Rust's ignored SIGPIPE: a peer closing a socket is an error, not an exit.
    use everblog::cli::Command;
    if matches!(
        cli.command,
        Command::List { .. }
            | Command::Show { .. }
            | Command::Rules { .. }
            | Command::Extract { .. }
            | Command::Coverage { .. }
            | Command::Status { .. }
            | Command::Report { .. }
            | Command::Config { .. }
            | Command::Export { .. }
    ) {
        // SAFETY: setting a signal's disposition to the default, before any thread of ours
        // writes to a pipe; no handler runs.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    // The service logs what it does by default; interactive commands only warnings.
    let service = matches!(cli.command, everblog::cli::Command::Daemon { .. });
    let level = match (cli.verbose, service) {
        (0, false) => "warn",
        (0, true) | (1, _) => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("everblog={level}")));
    // Under systemd (stderr is the journal) the journal adds timestamps. Colour only on a
    // terminal, and never with NO_COLOR set (https://no-color.org).
    let journal = std::env::var_os("JOURNAL_STREAM").is_some();
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(colour && !journal);
    if journal {
        logs.without_time().init();
    } else {
        logs.init();
    }
    // Two worker threads for the commands that fetch, crawl, serve or export; `archive extract`
    // reads one page on the thread it started on: starting workers was a third of its time.
    let runtime = match cli.command {
        Command::Extract { .. } => tokio::runtime::Builder::new_current_thread(),
        _ => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }
    }
    .enable_all()
    .build();
    let result = match runtime {
        Ok(rt) => rt.block_on(everblog::cli::run(cli)),
        Err(e) => Err(anyhow::anyhow!("could not start the async runtime: {e}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
