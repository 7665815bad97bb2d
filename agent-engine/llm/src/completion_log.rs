//! Completion logs: with `log_completions` on, [`LoggingLlm`] writes every call's request and
//! reply (or error) as one JSON file in `log_completions_folder`, for debugging prompts and
//! providers. Files are written atomically (temporary file, fsync, rename), named by time so
//! they sort in call order, and masked before they touch the disk: the API key, header values
//! and any secret the caller names never reach a log. A log that cannot be written is a
//! warning, never a failed call.
//!
//! `log_completions` and `log_completions_folder` are upstream `LLM` fields that Tandem keeps
//! verbatim in [`LlmConfig::extra`]; [`log_completions`] and [`log_completions_folder`] read them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use crate::{Llm, LlmError, LlmRequest, LlmResponse, Result};

/// What replaces a masked value.
pub const MASK: &str = "**********";

/// Where logs go when the configuration names no folder (upstream's default).
pub const DEFAULT_FOLDER: &str = "logs/completions";

/// A caller-supplied masking function (e.g. the conversation's secret masker).
pub type MaskFn = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Whether `config` asks for completion logs (`log_completions: true`).
pub fn log_completions(config: &LlmConfig) -> bool {
    config
        .extra
        .get("log_completions")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The folder `config` logs completions to (`log_completions_folder`, else
/// [`DEFAULT_FOLDER`], relative to the working directory as upstream has it).
pub fn log_completions_folder(config: &LlmConfig) -> PathBuf {
    config
        .extra
        .get("log_completions_folder")
        .and_then(Value::as_str)
        .filter(|f| !f.trim().is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_FOLDER), PathBuf::from)
}

/// Wraps a client and logs each of its calls to a folder, masked.
pub struct LoggingLlm<L> {
    inner: L,
    folder: PathBuf,
    /// Literal values to mask, longest first (the key and header values always among them).
    secrets: Vec<String>,
    masker: Option<MaskFn>,
    counter: AtomicU64,
}

impl<L: Llm> std::fmt::Debug for LoggingLlm<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoggingLlm")
            .field("model", &self.inner.config().model)
            .field("folder", &self.folder)
            .field("secrets", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

impl<L: Llm> LoggingLlm<L> {
    /// Logs `inner`'s calls into `folder` (created on first write). The API key and the extra
    /// header values of `inner`'s configuration are always masked.
    pub fn new(inner: L, folder: impl Into<PathBuf>) -> Self {
        let config = inner.config();
        let mut secrets: Vec<String> = config.api_key.iter().cloned().collect();
        secrets.extend(
            config
                .extra_headers
                .iter()
                .flatten()
                .map(|(_, v)| v.clone()),
        );
        let mut this = Self {
            inner,
            folder: folder.into(),
            secrets: Vec::new(),
            masker: None,
            counter: AtomicU64::new(0),
        };
        this.add_secrets(secrets);
        this
    }

    /// `inner` wrapped when its configuration has `log_completions: true`, else `inner` as is
    /// (`Err`), so a factory can write `match LoggingLlm::from_config(llm) { ... }`.
    pub fn from_config(inner: L) -> std::result::Result<Self, L> {
        if log_completions(inner.config()) {
            let folder = log_completions_folder(inner.config());
            Ok(Self::new(inner, folder))
        } else {
            Err(inner)
        }
    }

    /// Also masks these literal values (secrets of the conversation).
    pub fn with_secrets<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.add_secrets(values.into_iter().map(Into::into));
        self
    }

    /// Also passes every logged string through `masker` (e.g. `move |t| masker.mask(t)`).
    pub fn with_masker(mut self, masker: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        self.masker = Some(Arc::new(masker));
        self
    }

    /// The folder logs go to.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The wrapped client.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    fn add_secrets(&mut self, values: impl IntoIterator<Item = String>) {
        self.secrets
            .extend(values.into_iter().filter(|v| !v.is_empty()));
        self.secrets
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.secrets.dedup();
    }

    /// `text` with every secret replaced by [`MASK`].
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASK);
            }
        }
        match &self.masker {
            Some(masker) => masker(&out),
            None => out,
        }
    }

    /// The log record of one call, masked.
    pub fn record(
        &self,
        request: &LlmRequest,
        outcome: &Result<LlmResponse>,
        timestamp: f64,
    ) -> Value {
        let config = self.inner.config();
        let messages = serde_json::to_value(&request.messages).unwrap_or(Value::Null);
        let mut record = json!({
            "timestamp": timestamp,
            "model": config.model,
            "usage_id": config.usage_id,
            "base_url": config.base_url,
            "request": {
                "messages": messages,
                "tools": request.tools,
                "prompt_cache_key": request.prompt_cache_key,
                "stream": request.on_delta.is_some() || config.stream,
            },
        });
        match outcome {
            Ok(response) => {
                record["response"] = json!({
                    "id": response.id,
                    "model": response.model,
                    "message": serde_json::to_value(&response.message).unwrap_or(Value::Null),
                    "finish_reason": response.finish_reason,
                    "usage": serde_json::to_value(&response.usage).unwrap_or(Value::Null),
                });
                record["cost"] = json!(response.cost);
                record["latency"] = json!(response.latency.as_secs_f64());
            }
            Err(error) => {
                record["error"] = json!({"code": error.code(), "message": error.to_string()});
            }
        }
        self.mask_json(&mut record);
        record
    }

    fn mask_json(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.mask(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.mask_json(v)),
            _ => {}
        }
    }

    async fn write(&self, record: Value, micros: u128) {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let model: String = self
            .inner
            .config()
            .model
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!(
            "{micros:020}-{n:04}-{model}-{}.json",
            uuid::Uuid::new_v4().simple()
        );
        let folder = self.folder.clone();
        let bytes = match serde_json::to_vec_pretty(&record) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(error = %e, "cannot serialise a completion log");
                return;
            }
        };
        let written =
            tokio::task::spawn_blocking(move || write_atomic(&folder, &name, &bytes)).await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(folder = %self.folder.display(), error = %e, "cannot write a completion log")
            }
            Err(e) => tracing::warn!(error = %e, "completion log writer failed"),
        }
    }
}

/// Writes `bytes` to `folder/name` (creating the folder) with [`tandem_fs::atomic_write`]: a
/// temp file created exclusively with mode 0600, fsynced, then renamed.
fn write_atomic(folder: &Path, name: &str, bytes: &[u8]) -> tandem_fs::Result<()> {
    std::fs::create_dir_all(folder).map_err(|e| tandem_fs::Error::io("create", folder, e))?;
    tandem_fs::atomic_write(&folder.join(name), bytes)
}

impl<L: Llm> Llm for LoggingLlm<L> {
    fn config(&self) -> &LlmConfig {
        self.inner.config()
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        Box::pin(async move {
            let mut logged = request.clone();
            logged.on_delta = None;
            let streams = request.on_delta.is_some();
            let outcome = self.inner.completion(request, cancel).await;
            if !matches!(outcome, Err(LlmError::Cancelled)) {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                let mut record = self.record(&logged, &outcome, now.as_secs_f64());
                if streams {
                    record["request"]["stream"] = Value::Bool(true);
                }
                self.write(record, now.as_micros()).await;
            }
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::write_atomic;

    #[test]
    fn a_log_is_written_into_a_new_folder_for_the_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("logs/completions");
        write_atomic(&folder, "0001-openai.json", b"{}").unwrap();
        let names: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["0001-openai.json"], "no temp file is left");
        let mode = std::fs::metadata(folder.join("0001-openai.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
