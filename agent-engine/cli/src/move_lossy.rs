//! `tandem move CONVERSATION --to URL --lossy` toward an agent server that cannot import a
//! conversation (an upstream OpenHands server): a clearly labelled lossy move. The target gets
//! a new conversation on the LLM of this machine's settings, the workspace's files uploaded
//! into `--working-dir`, and a summary of the old conversation as its first message (not run:
//! it waits for the person, as an import does). The events, the terminal, the browser and the
//! checkpoints stay behind, and the source becomes a record naming the new conversation.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tandem_protocol::AgentSpec;
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};

use crate::move_cmd::{MoveArgs, Side, export_capsule};
use crate::settings::SettingsFile;

/// Longest part of one message the summary quotes.
const QUOTE: usize = 600;
/// Most commands the summary lists (the last ones).
const COMMANDS: usize = 15;
/// Most files the summary lists.
const FILES: usize = 60;

fn quote(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= QUOTE {
        return text.to_owned();
    }
    let cut: String = text.chars().take(QUOTE).collect();
    format!("{cut}…")
}

/// The events of the conversation folder `dir`, in log order, as JSON.
fn events(dir: &Path) -> Result<Vec<Value>> {
    let loaded = tandem_sdk::EventLog::read(&dir.join("events")).context("the capsule's events")?;
    Ok(loaded
        .json
        .iter()
        .filter_map(|bytes| serde_json::from_slice(bytes).ok())
        .collect())
}

fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A summary of the conversation, for its first message on the target: what was asked, what
/// the agent did and said last, and the files it left.
pub fn summary(title: Option<&str>, source: &str, events: &[Value], files: &[String]) -> String {
    let mut asked = Vec::new();
    let mut commands = Vec::new();
    let mut tools = std::collections::BTreeMap::<String, usize>::new();
    let mut last_word = None;
    for e in events {
        match e["kind"].as_str() {
            Some("MessageEvent") if e["source"] == "user" => {
                asked.push(quote(&text_of(&e["llm_message"])))
            }
            Some("MessageEvent") if e["source"] == "agent" => {
                last_word = Some(quote(&text_of(&e["llm_message"])))
            }
            Some("ActionEvent") => {
                let tool = e["tool_name"].as_str().unwrap_or("?").to_owned();
                if tool == "terminal"
                    && let Some(c) = e["action"]["command"].as_str()
                {
                    commands.push(quote(c));
                }
                if tool == "finish"
                    && let Some(m) = e["action"]["message"].as_str()
                {
                    last_word = Some(quote(m));
                }
                *tools.entry(tool).or_default() += 1;
            }
            _ => {}
        }
    }
    let mut out = format!(
        "[Moved here from Tandem ({source}) — a lossy move: this server cannot import a conversation, so its {} events, terminal, browser and checkpoints stayed behind. This is a summary of it; the workspace's files were uploaded.]\n",
        events.len()
    );
    if let Some(t) = title {
        out.push_str(&format!("\nTitle: {t}\n"));
    }
    if !asked.is_empty() {
        out.push_str("\nWhat the person asked:\n");
        for a in &asked {
            out.push_str(&format!("- {a}\n"));
        }
    }
    if !tools.is_empty() {
        let used: Vec<String> = tools.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
        out.push_str(&format!("\nActions taken: {}\n", used.join(", ")));
    }
    if !commands.is_empty() {
        out.push_str("\nLast commands run:\n");
        for c in commands.iter().rev().take(COMMANDS).rev() {
            out.push_str(&format!("- `{c}`\n"));
        }
    }
    if let Some(w) = last_word {
        out.push_str(&format!("\nThe agent's last word: {w}\n"));
    }
    if !files.is_empty() {
        out.push_str(&format!("\nFiles in the workspace ({}):\n", files.len()));
        for f in files.iter().take(FILES) {
            out.push_str(&format!("- {f}\n"));
        }
        if files.len() > FILES {
            out.push_str(&format!("- … and {} more\n", files.len() - FILES));
        }
    }
    out
}

/// Every regular file under `root`, relative, sorted (symbolic links are not followed).
fn files_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    if let Ok(rel) = path.strip_prefix(root) {
                        found.push(rel.to_string_lossy().into_owned());
                    }
                }
                _ => {}
            }
        }
    }
    found.sort();
    found
}

/// The lossy move of conversation `id` from `source` to the upstream server at `url`.
pub async fn to_upstream(
    args: &MoveArgs,
    id: &str,
    source: &Side,
    url: &str,
    settings: &SettingsFile,
) -> Result<u8> {
    let Some(dir) = args.working_dir.as_deref() else {
        bail!(
            "--working-dir: name the folder on {url} the workspace's files go to (an upstream server picks none itself)"
        );
    };
    let Some(llm) = tandem_host::settings::server_llm(settings)? else {
        bail!(
            "{url} needs the LLM with its key in the new conversation: configure a provider (tandem settings) or set LLM_MODEL and LLM_API_KEY"
        );
    };
    let workspace = RemoteWorkspace::connect(url, args.to_key.clone(), dir)
        .await
        .with_context(|| format!("the target {url}"))?;
    eprintln!(
        "· lossy move to {url}: a new conversation, the workspace uploaded, a summary as its first message"
    );

    eprintln!("· phase export");
    let scratch = tempfile::tempdir().context("cannot make a scratch folder")?;
    let bytes = export_capsule(args, id, source).await?;
    let capsule = scratch.path().join("conversation.tandem-capsule");
    std::fs::write(&capsule, &bytes).context("cannot store the capsule")?;
    let opened = tandem_capsule::open(&capsule, &scratch.path().join("opened"))
        .context("the source's capsule")?;

    // The workspace as the source has it, written into a scratch folder, then uploaded.
    let files_dir = scratch.path().join("workspace");
    std::fs::create_dir_all(&files_dir)?;
    if let (Some(ws), Some(bundle)) = (&opened.manifest.workspace, &opened.bundle) {
        let store = tandem_checkpoint::Store::open(&scratch.path().join("store"), &files_dir)
            .context("a scratch store for the workspace")?;
        store
            .import_bundle(bundle)
            .context("the capsule's workspace")?;
        store
            .materialize(&ws.commit)
            .context("cannot write the workspace into a scratch folder")?;
    }
    let files = files_under(&files_dir);
    eprintln!("· phase upload ({} files)", files.len());
    let base = dir.trim_end_matches('/');
    for rel in &files {
        let bytes = std::fs::read(files_dir.join(rel))?;
        workspace
            .upload_bytes(bytes, &format!("{base}/{rel}"))
            .await
            .with_context(|| {
                format!("uploading {rel} to {url}; the conversation stays where it is")
            })?;
    }

    eprintln!("· phase create");
    let events = events(&opened.conversation_dir)?;
    let text = summary(
        opened.manifest.title.as_deref(),
        source.url(),
        &events,
        &files,
    );
    let mut options = RemoteConversationOptions::new(AgentSpec::default_for(llm));
    options.working_dir = Some(base.to_owned());
    options.initial_message = Some((text, false));
    let created = workspace
        .create_conversation(&options)
        .await
        .with_context(|| format!("{url} did not create the conversation; it stays where it is"))?;
    let new_id = created.id().to_owned();

    eprintln!("· phase fence");
    let last = events
        .last()
        .and_then(|e| e["id"].as_str())
        .map(str::to_owned);
    let fence = json!({"url": url, "conversation_id": new_id, "last_event_id": last});
    source
        .client
        .post(&format!("/api/conversations/{id}/moved"), Some(&fence))
        .await
        .with_context(|| {
            format!("the new conversation {new_id} is on {url}, but the source did not let the old one go (it stays runnable there)")
        })?;
    println!(
        "Lossy move: {id} continues on {url} as the new conversation {new_id} ({} files uploaded to {base}, a summary of {} events as its first message). Its events, terminal, browser and checkpoints stayed behind, here a read-only record.",
        files.len(),
        events.len()
    );
    Ok(0)
}
