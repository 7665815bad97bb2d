//! `tandem move CONVERSATION --to local | URL [--server SOURCE_URL]`: a conversation moves to
//! another backend with its events, state and workspace, in four steps: export from the
//! source; import on the target as arriving (read-only there); the source fenced as a
//! read-only record (the point where the conversation changes hands); the arrival accepted on
//! the target. A failure before the fence abandons the arriving copy and leaves the
//! conversation where it was; the fence and the arrival are retried while their server
//! restarts, so a crash of either side at any step leaves exactly one side running it.
//!
//! `local` is this machine's `$TANDEM_HOME`, served in-process for the move (the desktop app
//! must not have the conversation open).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tandem_sdk::remote::{RemoteError, ServerClient};

use crate::remote::RemoteFlags;
use crate::settings::SettingsFile;

/// `tandem move`'s arguments.
#[derive(Debug, clap::Args)]
pub struct MoveArgs {
    /// The conversation's id.
    pub id: String,
    /// Where it goes: `local` (this machine's TANDEM_HOME), `sandbox` (a Docker sandbox
    /// started for it, its workspace the folder --working-dir names or a new one under
    /// $TANDEM_HOME/workspaces), or an agent server's URL.
    #[arg(long)]
    pub to: String,
    /// The target server's session key (env TANDEM_TO_SESSION_KEY).
    #[arg(long, env = "TANDEM_TO_SESSION_KEY", hide_env_values = true)]
    pub to_key: Option<String>,
    /// The workspace folder on the target (default: a new folder under its workspace root
    /// named after the conversation).
    #[arg(long)]
    pub working_dir: Option<String>,
    /// Move even if it is running (it is paused at the end of its step) or an action waits for
    /// approval (the action is rejected).
    #[arg(long)]
    pub force: bool,
    /// Carry the replay lanes (terminal recordings, browser frames) too.
    #[arg(long)]
    pub include_replay: bool,
    /// Toward a server that cannot import a conversation (an upstream OpenHands server): a new
    /// conversation there, the workspace's files uploaded into --working-dir, and a summary of
    /// this one as its first message; the events, terminal, browser and checkpoints stay behind.
    #[arg(long)]
    pub lossy: bool,
    /// The source (default: this machine's TANDEM_HOME).
    #[command(flatten)]
    pub source: RemoteFlags,
    /// The sandbox's limits and environment, with `--to sandbox`.
    #[command(flatten)]
    pub sandbox: crate::sandbox::Limits,
}

/// A server taking part in the move: a remote one, or this machine's home served in-process
/// on loopback for the move.
pub(crate) struct Side {
    pub(crate) client: ServerClient,
    /// The in-process server's task, for `local`; stopped when the move ends.
    local: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Side {
    fn remote(url: &str, key: Option<String>) -> Result<Self> {
        Ok(Self {
            client: ServerClient::new(url, key)?,
            local: None,
            stop: None,
        })
    }

    async fn local(home: &Path, settings: &SettingsFile) -> Result<Self> {
        let mut config = tandem_server::ServerConfig::from_env(home);
        if config.profiles.is_empty()
            && let Some(llm) = tandem_host::settings::server_llm(settings)?
        {
            config.profiles.insert("default".into(), llm);
        }
        let key = uuid::Uuid::new_v4().simple().to_string();
        config.session_keys = vec![key.clone()];
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("cannot listen on loopback for the local side of the move")?;
        let url = format!("http://{}", listener.local_addr()?);
        let server = tandem_server::Server::start(config).await;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.serve(listener, async {
            let _ = stopped.await;
        }));
        Ok(Self {
            client: ServerClient::new(&url, Some(key))?,
            local: Some(task),
            stop: Some(stop),
        })
    }

    pub(crate) fn url(&self) -> &str {
        self.client.base_url()
    }

    /// Stops the in-process server (its conversations closed and saved).
    async fn close(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.local.take() {
            let _ = task.await;
        }
    }
}

/// Runs `tandem move`.
pub async fn run(args: MoveArgs, home: &Path, settings: &SettingsFile) -> Result<u8> {
    let id = args.id.trim().to_owned();
    let to_local = args.to == "local";
    if args.to == "sandbox" {
        return to_sandbox(&args, &id, home, settings).await;
    }
    if to_local && args.source.server.is_none() {
        bail!(
            "the conversation is local already: name a server with --to, or a source with --server"
        );
    }
    let source = match &args.source.server {
        Some(url) => Side::remote(url, args.source.session_key.clone())?,
        None => Side::local(home, settings).await?,
    };
    let target = if to_local {
        Side::local(home, settings).await?
    } else {
        Side::remote(&args.to, args.to_key.clone())?
    };
    if !to_local {
        let info = target
            .client
            .server_info()
            .await
            .with_context(|| format!("the target {}", target.url()));
        let imports = info.as_ref().is_ok_and(|i| {
            i["capabilities"]
                .as_array()
                .is_some_and(|c| c.iter().any(|x| x == "tandem_move_v1"))
        });
        if info.is_ok() && !imports {
            let moved = if args.lossy {
                crate::move_lossy::to_upstream(&args, &id, &source, target.url(), settings).await
            } else {
                Err(anyhow::anyhow!(
                    "{} cannot import a conversation (an upstream OpenHands server?): add --lossy to start a new conversation there with the workspace's files and a summary of this one (its events, terminal and browser stay behind)",
                    target.url()
                ))
            };
            source.close().await;
            return moved;
        }
    }
    // What the source's record names: the target's address (the in-process one for `local`
    // lives only for the move).
    let target_name = if to_local {
        "local".to_owned()
    } else {
        target.url().to_owned()
    };
    let moved = do_move(
        &args,
        &id,
        &source,
        &target,
        &target_name,
        args.working_dir.as_deref(),
    )
    .await;
    source.close().await;
    target.close().await;
    moved
}

/// `--to sandbox`: a Docker sandbox started for the conversation, its workspace a host folder
/// (new and empty) mounted at /workspace, where the conversation's files are written. The
/// sandbox outlives the command (`tandem sandbox stop` removes it); a failed move removes it
/// and the folder it made.
async fn to_sandbox(args: &MoveArgs, id: &str, home: &Path, settings: &SettingsFile) -> Result<u8> {
    let source = match &args.source.server {
        Some(url) => Side::remote(url, args.source.session_key.clone())?,
        None => Side::local(home, settings).await?,
    };
    let info: Value = match source
        .client
        .get_json(&format!("/api/conversations/{id}"), &[])
        .await
    {
        Ok(info) => info,
        Err(e) => {
            source.close().await;
            return Err(anyhow::Error::new(e).context(format!("conversation {id}")));
        }
    };
    let folder = match &args.working_dir {
        Some(dir) => std::path::PathBuf::from(dir),
        None => home
            .join("workspaces")
            .join(tandem_server::folder_name(info["title"].as_str(), id)),
    };
    let made = !folder.exists();
    let outcome = async {
        if !made && std::fs::read_dir(&folder)?.next().is_some() {
            bail!(
                "{} is not empty: the sandbox's workspace must be a new or empty folder",
                folder.display()
            );
        }
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("cannot make {}", folder.display()))?;
        let image = std::env::var(crate::sandbox::IMAGE_ENV)
            .unwrap_or_else(|_| tandem_sandbox::IMAGE.to_owned());
        let mut spec = args.sandbox.spec(folder.clone(), image, None)?;
        spec.owned_by_this_process = false;
        let sandboxes = crate::sandbox::sandboxes_of("docker").await?;
        let Some(started) = crate::sandbox::start_unless_interrupted(&sandboxes, &spec).await
        else {
            bail!("interrupted");
        };
        let running = started?;
        let sandbox = running.detach();
        let target = Side::remote(&sandbox.url, Some(sandbox.session_key.clone()))?;
        let moved = do_move(
            args,
            id,
            &source,
            &target,
            &sandbox.url,
            Some(&sandbox.workspace),
        )
        .await;
        if let Err(e) = moved {
            if let Err(stop) = sandboxes.stop(&sandbox.id).await {
                eprintln!("! the sandbox {} was not removed: {stop}", sandbox.id);
            }
            return Err(e);
        }
        println!("{}", serde_json::to_string(&sandbox)?);
        eprintln!(
            "· the sandbox {} runs it at {} (workspace {}); `tandem sandbox stop {}` removes it",
            sandbox.id,
            sandbox.url,
            folder.display(),
            sandbox.id
        );
        Ok(0)
    }
    .await;
    source.close().await;
    if outcome.is_err() && made {
        let _ = std::fs::remove_dir_all(&folder);
    }
    outcome
}

/// `POST /api/conversations/{id}/export` on the source, as `args` ask.
async fn export_request(
    args: &MoveArgs,
    id: &str,
    source: &Side,
    base: Option<&str>,
) -> Result<reqwest::Response, RemoteError> {
    let body = json!({
        "force": args.force,
        "include_replay": args.include_replay,
        "source_url": source.url(),
        "base_commit": base,
    });
    let path = format!("/api/conversations/{id}/export");
    let req = source
        .client
        .request(reqwest::Method::POST, &path)
        .json(&body);
    source.client.send(&reqwest::Method::POST, &path, req).await
}

/// The conversation's capsule from the source.
pub(crate) async fn export_capsule(args: &MoveArgs, id: &str, source: &Side) -> Result<Vec<u8>> {
    let resp = export_request(args, id, source, None)
        .await
        .context("export refused; the conversation stays where it is")?;
    Ok(resp
        .bytes()
        .await
        .context("the capsule's download was cut off; the conversation stays where it is")?
        .to_vec())
}

/// How long a step of the move that must not be left half-done (the fence, the arrival, the
/// abandonment) is retried while its server cannot be reached (it may be restarting).
const RETRY_LIMIT: Duration = Duration::from_secs(60);

/// Whether `e` says the server did not answer (down, restarting, or cut off mid-answer), so
/// the same idempotent call may be made again.
fn unanswered(e: &RemoteError) -> bool {
    matches!(e, RemoteError::Unreachable { .. })
        || matches!(e, RemoteError::Status { status, .. } if *status >= 500)
}

/// POSTs `body` to `path` until the server answers (for at most [`RETRY_LIMIT`]); the call
/// must be idempotent.
async fn post_until_answered(side: &Side, path: &str, body: &Value) -> Result<(), RemoteError> {
    let deadline = Instant::now() + RETRY_LIMIT;
    loop {
        let req = side.client.request(reqwest::Method::POST, path).json(body);
        match side.client.send(&reqwest::Method::POST, path, req).await {
            Ok(_) => return Ok(()),
            Err(e) if unanswered(&e) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Abandons the move on the target: the arriving copy (if the import got that far) is
/// deleted; the source was never fenced, so it keeps the conversation.
async fn abandon(target: &Side, id: &str) {
    let path = format!("/api/conversations/{id}/arrival");
    match post_until_answered(target, &path, &json!({"accept": false})).await {
        Ok(()) | Err(RemoteError::NotFound(_)) => {}
        Err(e) => eprintln!(
            "! the target may keep a read-only arriving copy (it never runs there; delete it with DELETE /api/conversations/{id} on {}): {e}",
            target.url()
        ),
    }
}

async fn do_move(
    args: &MoveArgs,
    id: &str,
    source: &Side,
    target: &Side,
    target_name: &str,
    working_dir: Option<&str>,
) -> Result<u8> {
    let started = Instant::now();
    let info: Value = source
        .client
        .get_json(&format!("/api/conversations/{id}"), &[])
        .await
        .with_context(|| format!("conversation {id} on {}", source.url()))?;
    target
        .client
        .server_info()
        .await
        .with_context(|| format!("the target {}", target.url()))?;
    eprintln!(
        "· moving {} ({}) from {} to {}",
        info["title"].as_str().unwrap_or(id),
        info["execution_status"].as_str().unwrap_or("?"),
        source.url(),
        target.url()
    );
    let arrival = format!("/api/conversations/{id}/arrival");

    // 1. Export: a capsule in a scratch file.
    eprintln!("· phase export");
    let scratch = tempfile::tempdir().context("cannot make a scratch folder")?;
    let capsule = scratch.path().join("conversation.tandem-capsule");
    // Moving back onto a record the target keeps, into the folder it left: only what changed
    // since travels.
    let base = match working_dir {
        Some(_) => None,
        None => target
            .client
            .get_json::<Value>(&format!("/api/conversations/{id}/moved"), &[])
            .await
            .ok()
            .and_then(|r| r["workspace_base"].as_str().map(str::to_owned)),
    };
    if let Some(base) = &base {
        eprintln!(
            "· the target still holds the workspace as it left ({}): only what changed travels",
            &base[..12.min(base.len())]
        );
    }
    let resp = match export_request(args, id, source, base.as_deref()).await {
        Ok(resp) => resp,
        // A move that was cut off after its fence: the source let go already, only the
        // arrival is left to do.
        Err(RemoteError::Conflict { detail, code })
            if code.as_deref() == Some("moved") && detail.contains(target_name) =>
        {
            eprintln!("· phase arrival (the source was fenced by an earlier move)");
            post_until_answered(target, &arrival, &json!({"accept": true}))
                .await
                .with_context(|| {
                    format!("the conversation could not be started on {}", target.url())
                })?;
            println!("Moved {id} to {target_name}: the earlier move is finished");
            return Ok(0);
        }
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context("export refused; the conversation stays where it is")
            );
        }
    };
    let bytes = resp
        .bytes()
        .await
        .context("the capsule's download was cut off; the conversation stays where it is")?;
    std::fs::write(&capsule, &bytes)
        .with_context(|| format!("cannot store the capsule at {}", capsule.display()))?;
    let exported = started.elapsed();

    // 2. Import on the target, as arriving: it does not run there before step 4.
    eprintln!("· phase import");
    let options = json!({ "working_dir": working_dir, "pending": true });
    let form = reqwest::multipart::Form::new()
        .part(
            "capsule",
            reqwest::multipart::Part::bytes(bytes.to_vec())
                .file_name(format!("{id}.tandem-capsule"))
                .mime_str(tandem_capsule::MEDIA_TYPE)?,
        )
        .text("options", options.to_string());
    let path = "/api/conversations/import";
    let req = target
        .client
        .request(reqwest::Method::POST, path)
        .multipart(form);
    let imported: Value = match target.client.send(&reqwest::Method::POST, path, req).await {
        Ok(resp) => match resp.json().await {
            Ok(v) => v,
            Err(e) => {
                abandon(target, id).await;
                bail!(
                    "the target's answer to the import was cut off ({e}); the conversation stays where it was"
                );
            }
        },
        Err(e) => {
            if unanswered(&e) {
                abandon(target, id).await;
            }
            return Err(anyhow::Error::new(e)
                .context("the target refused the conversation; it stays where it was"));
        }
    };

    // 3. The source becomes a record of the move: from here the conversation is the target's.
    // Refused when the source went on since the export (its newest event differs).
    eprintln!("· phase fence");
    let fence = json!({
        "url": target_name,
        "conversation_id": id,
        "last_event_id": imported["last_event_id"],
    });
    if let Err(e) =
        post_until_answered(source, &format!("/api/conversations/{id}/moved"), &fence).await
    {
        if unanswered(&e) {
            bail!(
                "the source did not answer the fence for {} s ({e}): the conversation may be fenced there or not. Run the same `tandem move` again once it answers: it finishes or starts over",
                RETRY_LIMIT.as_secs()
            );
        }
        abandon(target, id).await;
        return Err(anyhow::Error::new(e)
            .context("the source refused to let the conversation go; it stays there"));
    }

    // 4. It runs on the target from now on.
    eprintln!("· phase arrival");
    post_until_answered(target, &arrival, &json!({"accept": true}))
        .await
        .with_context(|| {
            format!(
                "the source let the conversation go, but {} did not start it: run the same `tandem move` again to finish",
                target.url()
            )
        })?;
    println!(
        "Moved {id} to {target_name} in {:.2} s (export {:.2} s, capsule {:.1} MB): {} events, workspace {}, {}",
        started.elapsed().as_secs_f64(),
        exported.as_secs_f64(),
        bytes.len() as f64 / 1e6,
        imported["events"],
        imported["working_dir"].as_str().unwrap_or("?"),
        imported["execution_status"].as_str().unwrap_or("?"),
    );
    Ok(0)
}
