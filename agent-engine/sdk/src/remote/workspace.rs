//! A workspace on an agent server: commands through the bash API, files through upload and
//! download, and the server's conversations.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::conversation::{RemoteConversation, RemoteConversationOptions};
use super::error::{RemoteError, RemoteResult};
use super::http::{ServerClient, decode};

/// How often `execute_command` polls for the command's output.
const OUTPUT_POLL: Duration = Duration::from_millis(50);

/// What a command run on the server produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandResult {
    /// The command.
    pub command: String,
    /// Its exit code (`-1` when it timed out).
    pub exit_code: i64,
    /// Standard output (all chunks, in order).
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Whether the command ran out of time.
    pub timeout_occurred: bool,
}

#[derive(Deserialize)]
struct BashCommand {
    id: String,
}

#[derive(Deserialize)]
struct BashOutput {
    #[serde(default)]
    order: i64,
    #[serde(default)]
    exit_code: Option<i64>,
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    stderr: Option<String>,
}

#[derive(Deserialize)]
struct Page<T> {
    #[serde(default = "Vec::new")]
    items: Vec<T>,
    #[serde(default)]
    next_page_id: Option<String>,
}

/// A connection to an agent server (ours or upstream's) and a working directory on it.
#[derive(Debug, Clone)]
pub struct RemoteWorkspace {
    client: ServerClient,
    working_dir: String,
    info: Value,
}

impl RemoteWorkspace {
    /// Connects to the server at `url` with an optional session key: checks that it is an
    /// agent server (`/server_info`) and that the key is accepted. `working_dir` is the
    /// server-side directory conversations work in by default.
    pub async fn connect(
        url: &str,
        session_key: Option<String>,
        working_dir: impl Into<String>,
    ) -> RemoteResult<Self> {
        let client = ServerClient::new(url, session_key)?;
        let info = client.server_info().await?;
        client.check_key().await?;
        Ok(Self {
            client,
            working_dir: working_dir.into(),
            info,
        })
    }

    /// The HTTP client.
    pub fn client(&self) -> &ServerClient {
        &self.client
    }

    /// The server-side working directory.
    pub fn working_dir(&self) -> &str {
        &self.working_dir
    }

    /// `/server_info` as read at connect time (version, uptime, tools, ...).
    pub fn server_info(&self) -> &Value {
        &self.info
    }

    /// Reads `/server_info` again.
    pub async fn refresh_server_info(&mut self) -> RemoteResult<&Value> {
        self.info = self.client.server_info().await?;
        Ok(&self.info)
    }

    /// Runs `command` on the server (in `cwd`, default the working directory) and waits for it,
    /// up to `timeout`: `start_bash_command`, then polling `bash_events/search` until an output
    /// carries an exit code.
    pub async fn execute_command(
        &self,
        command: &str,
        cwd: Option<&str>,
        timeout: Duration,
    ) -> RemoteResult<CommandResult> {
        let body = json!({
            "command": command,
            "cwd": cwd.unwrap_or(&self.working_dir),
            "timeout": timeout.as_secs().max(1),
        });
        let started: BashCommand = self
            .client
            .call_json(Method::POST, "/api/bash/start_bash_command", Some(&body))
            .await?;
        let deadline = Instant::now() + timeout + Duration::from_secs(10);
        loop {
            let outputs = self.outputs_of(&started.id).await?;
            if let Some(code) = outputs.iter().find_map(|o| o.exit_code) {
                let mut result = CommandResult {
                    command: command.to_owned(),
                    exit_code: code,
                    stdout: String::new(),
                    stderr: String::new(),
                    timeout_occurred: code == -1,
                };
                for o in outputs {
                    result.stdout.push_str(o.stdout.as_deref().unwrap_or(""));
                    result.stderr.push_str(o.stderr.as_deref().unwrap_or(""));
                }
                return Ok(result);
            }
            if Instant::now() > deadline {
                return Ok(CommandResult {
                    command: command.to_owned(),
                    exit_code: -1,
                    stdout: outputs.iter().filter_map(|o| o.stdout.as_deref()).collect(),
                    stderr: outputs.iter().filter_map(|o| o.stderr.as_deref()).collect(),
                    timeout_occurred: true,
                });
            }
            tokio::time::sleep(OUTPUT_POLL).await;
        }
    }

    async fn outputs_of(&self, command_id: &str) -> RemoteResult<Vec<BashOutput>> {
        let mut all = Vec::new();
        let mut page: Option<String> = None;
        loop {
            let mut query = vec![
                ("kind__eq", "BashOutput".to_owned()),
                ("command_id__eq", command_id.to_owned()),
                ("sort_order", "TIMESTAMP".to_owned()),
                ("limit", "100".to_owned()),
            ];
            if let Some(p) = &page {
                query.push(("page_id", p.clone()));
            }
            let resp: Page<BashOutput> = self
                .client
                .get_json("/api/bash/bash_events/search", &query)
                .await?;
            all.extend(resp.items);
            match resp.next_page_id {
                Some(p) => page = Some(p),
                None => break,
            }
        }
        all.sort_by_key(|o| o.order);
        Ok(all)
    }

    /// Uploads `bytes` to `remote_path` (absolute, on the server). Returns the size written.
    pub async fn upload_bytes(&self, bytes: Vec<u8>, remote_path: &str) -> RemoteResult<u64> {
        let name = Path::new(remote_path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "upload".into());
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name),
        );
        let path = "/api/file/upload";
        let req = self
            .client
            .request(Method::POST, path)
            .query(&[("path", remote_path)])
            .multipart(form);
        let resp = self.client.send(&Method::POST, path, req).await?;
        let v: Value = decode(resp, path).await?;
        Ok(v.get("file_size").and_then(Value::as_u64).unwrap_or(0))
    }

    /// Uploads the local file `local` to `remote_path`.
    pub async fn file_upload(&self, local: &Path, remote_path: &str) -> RemoteResult<u64> {
        let bytes = tokio::fs::read(local)
            .await
            .map_err(|source| RemoteError::Io {
                op: "read",
                path: local.to_owned(),
                source,
            })?;
        self.upload_bytes(bytes, remote_path).await
    }

    /// Downloads `remote_path` (absolute, on the server).
    pub async fn download_bytes(&self, remote_path: &str) -> RemoteResult<Vec<u8>> {
        let path = "/api/file/download";
        let req = self
            .client
            .request(Method::GET, path)
            .query(&[("path", remote_path)]);
        let resp = self.client.send(&Method::GET, path, req).await?;
        let bytes = resp.bytes().await.map_err(|e| RemoteError::Unreachable {
            url: self.client.base_url().to_owned(),
            detail: e.to_string(),
        })?;
        Ok(bytes.to_vec())
    }

    /// Downloads `remote_path` into the local file `local`. Returns the size.
    pub async fn file_download(&self, remote_path: &str, local: &Path) -> RemoteResult<u64> {
        let bytes = self.download_bytes(remote_path).await?;
        tokio::fs::write(local, &bytes)
            .await
            .map_err(|source| RemoteError::Io {
                op: "write",
                path: local.to_owned(),
                source,
            })?;
        Ok(bytes.len() as u64)
    }

    /// Creates a conversation working in this workspace (unless the options name another
    /// directory) and opens its live stream.
    pub async fn create_conversation(
        &self,
        options: &RemoteConversationOptions,
    ) -> RemoteResult<RemoteConversation> {
        RemoteConversation::create(&self.client, options, &self.working_dir).await
    }

    /// Attaches to a conversation on the server.
    pub async fn attach(&self, id: &str) -> RemoteResult<RemoteConversation> {
        RemoteConversation::attach(&self.client, id).await
    }

    /// The server's conversations (`ConversationInfo` objects), newest first, up to `limit`.
    pub async fn list_conversations(&self, limit: usize) -> RemoteResult<Vec<Value>> {
        let mut all = Vec::new();
        let mut page: Option<String> = None;
        while all.len() < limit {
            let mut query = vec![("limit", limit.min(100).to_string())];
            if let Some(p) = &page {
                query.push(("page_id", p.clone()));
            }
            let resp: Page<Value> = self
                .client
                .get_json("/api/conversations/search", &query)
                .await?;
            all.extend(resp.items);
            match resp.next_page_id {
                Some(p) => page = Some(p),
                None => break,
            }
        }
        all.truncate(limit);
        Ok(all)
    }
}
