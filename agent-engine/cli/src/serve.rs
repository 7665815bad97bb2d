//! `tandem serve`: the agent server on `--host`/`--port` (default 127.0.0.1:8000, as upstream).
//!
//! Session keys come from `--session-key-file` (one key a line; the way that keeps keys out of
//! the process list and of every environment), `TANDEM_SESSION_KEY`, `TANDEM_SESSION_KEYS`
//! (comma list), `OH_SESSION_API_KEYS_0..n`, `SESSION_API_KEY` and `--session-key`
//! (repeatable, visible to every local process in the process list, so it warns); clients send
//! one as `X-Session-API-Key`.
//! Without a key the server only binds loopback. Conversations live in
//! `$TANDEM_HOME/conversations` (or `OH_CONVERSATIONS_PATH`); conversations created without a
//! workspace work in `OH_WORKSPACE_PATH` or `$TANDEM_HOME/workspace`. LLM keys posted with a
//! conversation stay in memory: after a restart the server takes them from `LLM_API_KEY` or
//! the provider's variable (`OPENAI_API_KEY`, ...). The gateway's `default` profile is
//! `LLM_MODEL`/`LLM_BASE_URL`/`LLM_API_KEY`, else the settings file's `llm`.
//!
//! Web pages on other origins may call the API when their origin is allowed with
//! `--allow-origin` (repeatable) or `TANDEM_ALLOWED_ORIGINS` (comma list): exact
//! `scheme://host[:port]` matches, and their requests still need the session key.

use std::io::IsTerminal;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use anyhow::{Context, Result, bail};
use tandem_server::settings::server_llm;
use tandem_server::{Cors, Server, ServerConfig};

use crate::settings::SettingsFile;

/// Flags of `tandem serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to bind (a non-loopback address needs a session key).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to bind (0 picks a free one).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Accepted session key (repeatable; visible in the process list: prefer --session-key-file); also TANDEM_SESSION_KEY, TANDEM_SESSION_KEYS, OH_SESSION_API_KEYS_0.., SESSION_API_KEY.
    #[arg(long = "session-key")]
    pub session_keys: Vec<String>,
    /// File holding the accepted session key(s), one a line (blank lines and `#` comments skipped).
    #[arg(long = "session-key-file", value_name = "PATH")]
    pub session_key_file: Option<std::path::PathBuf>,
    /// Runs at once before `run` answers 429.
    #[arg(long)]
    pub max_concurrent_runs: Option<usize>,
    /// Browser origin (scheme://host or scheme://host:port) whose pages may call the API (repeatable); also TANDEM_ALLOWED_ORIGINS (comma list).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// `demo`: the default LLM profile is the scripted demo LLM on loopback (no provider needed).
    #[arg(long, value_name = "demo")]
    pub llm: Option<String>,
}

/// The server's configuration from flags, environment and settings; an error for a settings
/// file whose LLM cannot work.
pub fn config(args: &ServeArgs, home: &Path, settings: &SettingsFile) -> Result<ServerConfig> {
    let mut c = ServerConfig::from_env(home);
    let from_file = match &args.session_key_file {
        Some(path) => keys_from_file(path)?,
        None => Vec::new(),
    };
    for k in from_file.iter().chain(&args.session_keys) {
        if !k.is_empty() && !c.session_keys.contains(k) {
            c.session_keys.push(k.clone());
        }
    }
    if let Some(n) = args.max_concurrent_runs {
        c.max_concurrent_runs = n.max(1);
    }
    if c.profiles.is_empty()
        && let Some(llm) = server_llm(settings)?
    {
        c.profiles.insert("default".into(), llm);
    }
    Ok(c)
}

/// The keys of a `--session-key-file`: one a line, blank lines and `#` comments skipped; an
/// error naming the file when it cannot be read or holds no key.
pub fn keys_from_file(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--session-key-file {}: cannot read it", path.display()))?;
    let keys: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if keys.is_empty() {
        bail!(
            "--session-key-file {}: the file holds no key (one key a line)",
            path.display()
        );
    }
    Ok(keys)
}

/// The CORS policy of `--allow-origin` and `TANDEM_ALLOWED_ORIGINS` (`env`); an entry that is
/// not an origin is an error naming where it came from.
pub fn cors(args: &ServeArgs, env: Option<&str>) -> Result<Cors> {
    let from_env = Cors::from_list(env.unwrap_or(""))
        .map_err(|e| anyhow::anyhow!("TANDEM_ALLOWED_ORIGINS: {e}"))?;
    let from_flags =
        Cors::new(&args.allow_origins).map_err(|e| anyhow::anyhow!("--allow-origin: {e}"))?;
    Cors::new(from_env.origins().iter().chain(from_flags.origins()))
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs the server until Ctrl-C or SIGTERM. Exit 2 for a refused address.
pub async fn serve(args: ServeArgs, home: &Path, settings: &SettingsFile) -> Result<u8> {
    let ip: IpAddr = args
        .host
        .parse()
        .or_else(|_| {
            if args.host == "localhost" {
                Ok(IpAddr::from([127, 0, 0, 1]))
            } else {
                Err(())
            }
        })
        .map_err(|()| {
            anyhow::anyhow!(
                "invalid --host `{}`: expected an IP address such as 127.0.0.1 or 0.0.0.0",
                args.host
            )
        })?;
    let cors = cors(
        &args,
        std::env::var("TANDEM_ALLOWED_ORIGINS").ok().as_deref(),
    )?;
    let mut config = config(&args, home, settings)?;
    if !args.session_keys.is_empty() {
        eprintln!(
            "warning: --session-key is visible to every local process in the process list; prefer --session-key-file PATH or TANDEM_SESSION_KEY"
        );
    }
    // Kept alive while the server runs: the demo LLM answers on loopback.
    let _demo = match args.llm.as_deref() {
        None => None,
        Some("demo") => {
            let demo = tandem_server::DemoLlm::start()
                .context("cannot start the demo LLM on 127.0.0.1")?;
            config
                .profiles
                .insert("default".into(), demo.config().clone());
            eprintln!(
                "· demo mode: a scripted LLM on {} plays the agent (no provider needed)",
                demo.base_url()
            );
            Some(demo)
        }
        Some(other) => bail!("unknown --llm `{other}`: the only built-in LLM is `demo`"),
    };
    if !ip.is_loopback() && config.session_keys.is_empty() {
        bail!(
            "refusing to listen on {ip} without a session key: anyone who can reach it could run commands on this machine. Pass --session-key-file PATH (or set TANDEM_SESSION_KEY), or bind 127.0.0.1"
        );
    }
    let addr = SocketAddr::new(ip, args.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let conversations = config.conversations_path.clone();
    let keyed = !config.session_keys.is_empty();
    let first_key = config.session_keys.first().cloned();
    let mut server = Server::start(config).await.with_cors(cors.clone());
    println!("Tandem agent server on http://{local}");
    let (ui, note) = tandem_server::ui::UiSource::from_env();
    if let Some(note) = note {
        eprintln!("warning: {note}");
    }
    if ui.has_ui() {
        // The key only on a terminal: piped output ends up in logs (`docker logs` of a
        // sandbox), where a session key must not.
        let key = first_key
            .filter(|_| std::io::stdout().is_terminal())
            .map(|k| format!("#key={k}"))
            .unwrap_or_default();
        println!("Open the UI: http://{local}/ui/{key}");
    }
    eprintln!("· web UI: {}", ui.describe());
    server = server.with_ui(ui);
    eprintln!(
        "· conversations in {}; {}",
        conversations.display(),
        if keyed {
            "clients must send X-Session-API-Key"
        } else {
            "no session key: loopback only"
        }
    );
    if !cors.is_empty() {
        eprintln!(
            "· CORS: pages on {} may call the API{}",
            cors.origins().join(", "),
            if keyed {
                " (with the session key)"
            } else {
                "; without a session key they can run commands here"
            }
        );
    }
    match std::env::var("TANDEM_SANDBOX")
        .ok()
        .filter(|s| !s.is_empty())
    {
        Some(kind) => eprintln!("· {kind} sandbox: agents run commands inside it"),
        None => eprintln!("warning: local mode: agents run commands on this machine"),
    }
    server
        .serve(listener, shutdown_signal())
        .await
        .context("the server stopped")?;
    Ok(0)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn args(flags: &[&str]) -> ServeArgs {
        Cli::try_parse_from(std::iter::once("serve").chain(flags.iter().copied()))
            .unwrap()
            .serve
    }

    #[test]
    fn allowed_origins_come_from_flags_and_the_environment() {
        let a = args(&[
            "--allow-origin",
            "https://a.example",
            "--allow-origin",
            "http://localhost:5173",
        ]);
        let c = cors(&a, Some("https://b.example, https://a.example")).unwrap();
        assert_eq!(
            c.origins(),
            [
                "https://b.example",
                "https://a.example",
                "http://localhost:5173"
            ]
        );
        assert!(cors(&args(&[]), None).unwrap().is_empty());
    }

    #[test]
    fn a_bad_origin_names_where_it_came_from() {
        let e = cors(&args(&["--allow-origin", "*"]), None).unwrap_err();
        assert!(e.to_string().starts_with("--allow-origin: "), "{e}");
        assert!(e.to_string().contains("`*`"), "{e}");
        let e = cors(&args(&[]), Some("https://ok.example,https://x.example/")).unwrap_err();
        assert!(e.to_string().starts_with("TANDEM_ALLOWED_ORIGINS: "), "{e}");
        assert!(e.to_string().contains("https://x.example/"), "{e}");
    }

    #[test]
    fn session_keys_come_from_a_key_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys");
        std::fs::write(&path, "# the server's keys\n  k-one \n\nk-two\n").unwrap();
        assert_eq!(keys_from_file(&path).unwrap(), ["k-one", "k-two"]);
        std::fs::write(&path, "# nothing\n\n").unwrap();
        let e = keys_from_file(&path).unwrap_err().to_string();
        assert!(e.contains("holds no key") && e.contains("keys"), "{e}");
        let e = keys_from_file(&dir.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--session-key-file ") && e.contains("missing"),
            "{e}"
        );
    }
}
