//! `scripted-llm`: serves a scripted OpenAI-compatible LLM on loopback for UI tests and demos.
//!
//! `scripted-llm [--host 127.0.0.1] [--port N] (--script FILE | --demo)` prints
//! `listening on http://HOST:PORT/v1` and serves until interrupted.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use tandem_testkit::{Script, ScriptedLlmServer, Source, demo_responder};

/// Serve a scripted OpenAI Chat Completions LLM.
#[derive(Debug, Parser)]
#[command(name = "scripted-llm", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// A script file (see the tandem-testkit docs for the format).
    #[arg(long, conflicts_with = "demo", required_unless_present = "demo")]
    script: Option<PathBuf>,
    /// Serve the demo model (it learns each conversation's workspace from its requests).
    #[arg(long)]
    demo: bool,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let source = match (&args.script, args.demo) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading script {}", path.display()))?;
            let script = Script::from_json(&text)
                .with_context(|| format!("parsing script {}", path.display()))?;
            Source::Script(script)
        }
        (None, true) => Source::Responder(demo_responder()),
        (None, false) => anyhow::bail!("give --script FILE or --demo"),
    };
    let server = ScriptedLlmServer::bind(SocketAddr::new(args.host, args.port), source)
        .with_context(|| format!("binding {}:{}", args.host, args.port))?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.base_url())?;
    stdout.flush()?;
    tokio::signal::ctrl_c().await?;
    for violation in server.violations() {
        eprintln!("violation: {violation}");
    }
    if server.exhausted() {
        eprintln!("the script ran out before the last request");
    }
    Ok(())
}
