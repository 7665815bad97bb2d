//! `tandem serve`: the agent server on `--host`/`--port` (default 127.0.0.1:8000, as upstream).
//!
//! Session keys come from `--session-key-file` (one key a line), `TANDEM_SESSION_KEY`,
//! `TANDEM_SESSION_KEYS` (comma list), `OH_SESSION_API_KEYS_0..n`, `SESSION_API_KEY` and
//! `--session-key` (repeatable; it warns, since a command line is briefly visible to every
//! local process); clients send one as `X-Session-API-Key`. Given none, the server makes a
//! random one that lives only in its memory and is printed only to a terminal (`/ui/#key=…`);
//! `--no-auth` runs without a key (loopback only, with a warning).
//!
//! The agent's commands run as the user who started the server, and `/proc/<pid>/environ` and
//! `/proc/<pid>/cmdline` show a process's original environment and arguments to every process
//! of that user. So before anything else ([`shed_credentials`]) the server re-executes itself
//! without its credential variables (session keys, `LLM_API_KEY`, provider keys, ... — see
//! `tandem_llm::held_env`) and without `--session-key` / `--session-key-file` on its command
//! line, handing their values to the new image through a pipe on stdin that it reads once.
//! What stays possible for an agent running as the same user: reading a key file it can open,
//! or the server's memory with ptrace rights. A sandbox (another uid) is the boundary.
//!
//! Conversations live in
//! `$TANDEM_HOME/conversations` (or `OH_CONVERSATIONS_PATH`); conversations created without a
//! workspace work in `OH_WORKSPACE_PATH` or `$TANDEM_HOME/workspace`. LLM keys posted with a
//! conversation stay in memory: after a restart the server takes them from `LLM_API_KEY` or
//! the provider's variable (`OPENAI_API_KEY`, ...). The gateway's `default` profile is
//! `LLM_MODEL`/`LLM_BASE_URL`/`LLM_API_KEY`, else the settings file's `llm`.
//!
//! Web pages on other origins may call the API when their origin is allowed with
//! `--allow-origin` (repeatable) or `TANDEM_ALLOWED_ORIGINS` (comma list): exact
//! `scheme://host[:port]` matches, and their requests still need the session key.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use anyhow::{Context, Result, bail};
use tandem_host::settings::server_llm;
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
    /// Accepted session key (repeatable; visible in the process list until the server restarts itself without it: prefer --session-key-file); also TANDEM_SESSION_KEY, TANDEM_SESSION_KEYS, OH_SESSION_API_KEYS_0.., SESSION_API_KEY. Without any, a random key is made.
    #[arg(long = "session-key")]
    pub session_keys: Vec<String>,
    /// File holding the accepted session key(s), one a line (blank lines and `#` comments skipped). Locally the agent runs as you: keep the file where it cannot read it, or use a sandbox.
    #[arg(long = "session-key-file", value_name = "PATH")]
    pub session_key_file: Option<std::path::PathBuf>,
    /// Run without a session key: every local process, the agent's commands included, can use the API (loopback only).
    #[arg(long = "no-auth")]
    pub no_auth: bool,
    /// Session keys handed over by [`shed_credentials`] (never a flag).
    #[arg(skip)]
    pub held_keys: Vec<String>,
    /// Runs at once (default 10); more wait their turn in a queue, first come first served.
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
    for k in from_file
        .iter()
        .chain(&args.session_keys)
        .chain(&args.held_keys)
    {
        if !k.is_empty() && !c.session_keys.contains(k) {
            c.session_keys.push(k.clone());
        }
    }
    if args.no_auth && !c.session_keys.is_empty() {
        bail!(
            "--no-auth, yet session keys are given (--session-key, --session-key-file or TANDEM_SESSION_KEY(S) / OH_SESSION_API_KEYS_* / SESSION_API_KEY): drop one or the other"
        );
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
    // A key by default: made here, kept in memory only, so nothing the agent can read holds it.
    let generated = config.session_keys.is_empty() && !args.no_auth;
    if generated {
        config.session_keys.push(random_key());
    }
    if args.no_auth {
        eprintln!(
            "warning: --no-auth: every local process, the agent's own commands included, can use this server's API (approve the agent's actions, run commands)"
        );
    }
    // Kept alive while the server runs: the demo LLM answers on loopback.
    let _demo = match args.llm.as_deref() {
        None => None,
        Some("demo") => {
            let demo =
                tandem_host::DemoLlm::start().context("cannot start the demo LLM on 127.0.0.1")?;
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
    tandem_sdk::known_credentials().add(&config.session_keys);
    let mut server = Server::start(config).await.with_cors(cors.clone());
    println!("Tandem agent server on http://{local}");
    let (ui, note) = tandem_server::ui::UiSource::from_env();
    if let Some(note) = note {
        eprintln!("warning: {note}");
    }
    // The key only on a terminal: piped output ends up in logs (`docker logs` of a sandbox, a
    // file the agent can read), where a session key must not.
    let on_terminal = std::io::stdout().is_terminal();
    if ui.has_ui() {
        let key = first_key
            .as_ref()
            .filter(|_| on_terminal)
            .map(|k| format!("#key={k}"))
            .unwrap_or_default();
        println!("Open the UI: http://{local}/ui/{key}");
    } else if generated
        && on_terminal
        && let Some(k) = &first_key
    {
        println!("Session key (send it as X-Session-API-Key): {k}");
    }
    if generated && !on_terminal {
        eprintln!(
            "· a session key was made for this run and is shown only on a terminal; to choose one, pass --session-key-file PATH (or set TANDEM_SESSION_KEY)"
        );
    }
    eprintln!("· web UI: {}", ui.describe());
    server = server.with_ui(ui);
    eprintln!(
        "· conversations in {}; {}",
        conversations.display(),
        if keyed {
            "clients must send X-Session-API-Key"
        } else {
            "no session key (--no-auth): loopback only"
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

/// 256 random bits as 64 hex digits (two v4 UUIDs: 244 random bits), as the desktop's key.
fn random_key() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

fn warn_session_key_flag() {
    eprintln!(
        "warning: --session-key is visible to every local process in the process list (and stays in your shell's history); prefer --session-key-file PATH or TANDEM_SESSION_KEY"
    );
}

/// Set in the environment of the re-executed server: its credentials wait on stdin.
const HANDOVER_VAR: &str = "TANDEM_CREDENTIALS_ON_STDIN";

/// The most bytes of credentials handed over: what a pipe holds without a reader.
const HANDOVER_MAX: usize = 60 * 1024;

/// Takes the server's credentials out of what other processes of its user can read, before
/// anything else runs: the credential variables of its environment, `--session-key` and
/// `--session-key-file`. When there are any, the process re-executes itself
/// (`/proc/self/exe`, same pid) without them and with their values written to a pipe on
/// stdin; the new image (marked by [`HANDOVER_VAR`]) reads the pipe to its end, holds the
/// variables in memory ([`tandem_llm::held_env`]) and takes the keys as `args.held_keys`.
/// When re-executing fails it says so and goes on with the credentials where they are.
pub fn shed_credentials(args: &mut ServeArgs) -> Result<()> {
    if std::env::var_os(HANDOVER_VAR).is_some_and(|v| v == "1") && !std::io::stdin().is_terminal() {
        return take_handover(args);
    }
    let env = tandem_llm::held_env::credential_vars_in_env();
    if !args.session_keys.is_empty() {
        warn_session_key_flag();
    }
    let mut keys = args.session_keys.clone();
    if let Some(path) = &args.session_key_file {
        keys.extend(keys_from_file(path)?);
    }
    if env.is_empty() && keys.is_empty() {
        return Ok(());
    }
    let payload = serde_json::json!({"env": env, "session_keys": keys}).to_string();
    if payload.len() > HANDOVER_MAX {
        bail!(
            "the credentials in the environment and the session keys take {} bytes, more than the {HANDOVER_MAX} `tandem serve` can hand to itself: pass fewer",
            payload.len()
        );
    }
    let argv: Vec<OsString> = std::env::args_os().collect();
    let Some((arg0, rest)) = argv.split_first() else {
        return Ok(());
    };
    let err = (|| {
        let (reader, mut writer) = std::io::pipe()?;
        writer.write_all(payload.as_bytes())?;
        drop(writer);
        let mut cmd = std::process::Command::new("/proc/self/exe");
        std::os::unix::process::CommandExt::arg0(&mut cmd, arg0);
        cmd.args(without_key_flags(rest))
            .env(HANDOVER_VAR, "1")
            .stdin(std::process::Stdio::from(reader));
        for name in env.keys() {
            cmd.env_remove(name);
        }
        // Only returns on failure.
        Ok::<_, std::io::Error>(std::os::unix::process::CommandExt::exec(&mut cmd))
    })()
    .unwrap_or_else(|e| e);
    eprintln!(
        "warning: cannot restart without the credentials in the environment ({err}): this user's processes, the agent's commands included, can read them in /proc/{}/environ",
        std::process::id()
    );
    Ok(())
}

/// The re-executed server's side of [`shed_credentials`].
fn take_handover(args: &mut ServeArgs) -> Result<()> {
    let mut text = String::new();
    std::io::stdin()
        .take(HANDOVER_MAX as u64 + 1)
        .read_to_string(&mut text)
        .context("cannot read the credentials handed over on stdin")?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .context("the credentials handed over on stdin are not what `tandem serve` writes")?;
    let env: BTreeMap<String, String> = value
        .get("env")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
        .unwrap_or_default();
    let keys: Vec<String> = value
        .get("session_keys")
        .and_then(|k| serde_json::from_value(k.clone()).ok())
        .unwrap_or_default();
    tandem_llm::held_env::hold(env);
    args.held_keys = keys;
    Ok(())
}

/// `args` without `--session-key[=]K` and `--session-key-file[=]P` (and their values).
fn without_key_flags(args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut skip_value = false;
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let s = a.to_string_lossy();
        if s == "--session-key" || s == "--session-key-file" {
            skip_value = true;
        } else if !(s.starts_with("--session-key=") || s.starts_with("--session-key-file=")) {
            out.push(a.clone());
        }
    }
    out
}

pub(crate) async fn shutdown_signal() {
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
