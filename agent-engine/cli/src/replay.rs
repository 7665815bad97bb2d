//! `tandem replay export ID -o FILE`: a conversation of this machine (`$TANDEM_HOME`) written
//! as one trace file (events, terminal casts, browser frames, the checkpoints' trees) that
//! opens anywhere.

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
}

/// Runs a `tandem replay` command.
pub fn run(cmd: ReplayCmd, home: &Path, store: &ConversationStore) -> Result<()> {
    match cmd {
        ReplayCmd::Export { id, output } => export(home, store, &id, &output),
    }
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
