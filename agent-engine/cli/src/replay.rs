//! `tandem replay export ID -o FILE`: a conversation of this machine (`$TANDEM_HOME`) written
//! as one trace file (events, terminal casts, browser frames, the checkpoints' trees) that
//! opens anywhere. `tandem replay open FILE`: the trace served read-only on loopback, in the
//! same UI, from a scratch folder that goes when the server stops (no server state, no
//! network).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tandem_sdk::ConversationStore;

/// `tandem replay …`.
#[derive(Debug, clap::Subcommand)]
pub enum ReplayCmd {
    /// Write a conversation's trace: its events, terminal recordings, browser frames and
    /// checkpoints in one `.tandem-trace` file.
    Export {
        /// Conversation id.
        id: String,
        /// The file to write.
        #[arg(long, short)]
        output: PathBuf,
    },
    /// Serve a trace read-only on 127.0.0.1 and print the address of its replay in the UI.
    Open {
        /// The `.tandem-trace` file.
        file: PathBuf,
        /// Port to bind (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
}

/// Runs a `tandem replay` command.
pub async fn run(cmd: ReplayCmd, home: &Path, store: &ConversationStore) -> Result<()> {
    match cmd {
        ReplayCmd::Export { id, output } => export(home, store, &id, &output),
        ReplayCmd::Open { file, port } => open(&file, port).await,
    }
}

/// Extracts the trace into `scratch` as a server home holding its one conversation, working
/// in an empty folder of its own (never the original workspace) and not running; returns the
/// conversation's id and what the trace could not give.
fn unpack(file: &Path, scratch: &Path) -> Result<(String, Vec<String>)> {
    let opened = tandem_replay::trace::open(file, &scratch.join("trace"))?;
    let id = opened.manifest.conversation_id.clone();
    let home = scratch.join("home");
    let store = ConversationStore::new(home.join("conversations"));
    let dir = store.dir_for(&id)?;
    std::fs::create_dir_all(home.join("conversations"))?;
    std::fs::rename(&opened.conversation_dir, &dir)
        .with_context(|| format!("moving the trace's conversation to {}", dir.display()))?;
    let workspace = scratch.join("workspace");
    std::fs::create_dir_all(&workspace)?;
    let state_path = dir.join("base_state.json");
    let mut state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&state_path).context("the trace has no base_state.json")?,
    )
    .context("the trace's base_state.json")?;
    state["workspace"]["working_dir"] = workspace.to_string_lossy().into_owned().into();
    if state["execution_status"] == "running" {
        state["execution_status"] = "paused".into();
    }
    std::fs::write(&state_path, serde_json::to_vec(&state)?)?;
    let mut notes = opened.notes;
    // The checkpoints' trees, where the replay's diffs are read from.
    if let Some(bundle) = &opened.bundle {
        let imported = tandem_checkpoint::Store::open(&home, &workspace)
            .and_then(|store| store.import_bundle(bundle));
        if let Err(e) = imported {
            notes.push(format!("the checkpoints' files cannot be shown: {e}"));
        }
    }
    Ok((id, notes))
}

async fn open(file: &Path, port: u16) -> Result<()> {
    let scratch = tempfile::tempdir().context("cannot make a scratch folder")?;
    let (id, notes) =
        unpack(file, scratch.path()).with_context(|| format!("cannot open {}", file.display()))?;
    for n in &notes {
        eprintln!("warning: {n}");
    }
    let home = scratch.path().join("home");
    let mut config = tandem_server::ServerConfig::new(&home);
    config.read_only = true;
    // The trace's checkpoints (imported from its bundle), read for the replay's diffs; nothing
    // runs, so none is taken.
    config.checkpoints_outside = Vec::new();
    let key = uuid::Uuid::new_v4().simple().to_string();
    config.session_keys = vec![key.clone()];
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let local = listener.local_addr()?;
    let (ui, _) = tandem_server::ui::UiSource::from_env();
    let server = tandem_server::Server::start(config).await.with_ui(ui);
    println!(
        "Replaying {} (conversation {id}), read-only",
        file.display()
    );
    println!("Open: http://{local}/ui/#key={key}&conversation={id}&replay=1");
    eprintln!("· Ctrl-C (or SIGTERM) stops it; nothing of the trace is kept");
    server
        .serve(listener, crate::serve::shutdown_signal())
        .await?;
    drop(scratch);
    Ok(())
}

fn export(home: &Path, store: &ConversationStore, id: &str, output: &Path) -> Result<()> {
    let dir = store
        .dir_for(id)
        .with_context(|| format!("conversation {id}"))?;
    let state: tandem_protocol::ConversationState = serde_json::from_slice(
        &std::fs::read(dir.join("base_state.json"))
            .with_context(|| format!("conversation {id}: no such conversation here"))?,
    )
    .with_context(|| format!("conversation {id}: its base_state.json"))?;
    let workspace = PathBuf::from(&state.workspace.working_dir);
    // Written masked already; the host's credentials are masked once more on the way out.
    let masker = tandem_sdk::known_credentials().masker();
    let mask = |text: &str| masker.mask(text);
    let started = std::time::Instant::now();
    let written =
        tandem_server::write_trace(&dir, &state.id, &workspace, Some(home), &mask, output)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("writing {}", output.display()))?;
    println!(
        "{}: {} files, {:.1} MB in {:.1} s",
        output.display(),
        written.manifest.files,
        written.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
