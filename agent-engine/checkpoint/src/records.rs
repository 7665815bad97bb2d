//! A conversation's checkpoints: one JSON line each, appended as they are taken.

use std::io::Write;
use std::path::{Path, PathBuf};

use tandem_protocol::api::{Checkpoint, CheckpointAuthor};

use crate::error::{CheckpointError, Result};
use crate::store::Taken;

/// The file a conversation's checkpoints are listed in (`checkpoints.jsonl` in its directory).
#[derive(Debug, Clone)]
pub struct RecordLog {
    path: PathBuf,
}

/// The file name in a conversation's directory.
pub const RECORDS_FILE: &str = "checkpoints.jsonl";

impl RecordLog {
    /// The log of the conversation stored in `conversation_dir`.
    pub fn new(conversation_dir: &Path) -> Self {
        Self {
            path: conversation_dir.join(RECORDS_FILE),
        }
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the record of `taken` (synced before it returns).
    pub fn append(
        &self,
        taken: &Taken,
        event_id: &str,
        author: CheckpointAuthor,
        tool_name: Option<String>,
    ) -> Result<Checkpoint> {
        let record = taken.record(event_id, author, tool_name);
        self.append_record(&record)?;
        Ok(record)
    }

    fn append_record(&self, record: &Checkpoint) -> Result<()> {
        let mut line = serde_json::to_vec(record).map_err(|e| CheckpointError::Corrupt {
            path: self.path.clone(),
            detail: e.to_string(),
        })?;
        line.push(b'\n');
        let mut file = open_append(&self.path)?;
        file.write_all(&line)
            .and_then(|()| file.sync_data())
            .map_err(|e| CheckpointError::io("write", &self.path, e))
    }

    /// Every record, oldest first. A torn last line (a crash while appending) is left out; a
    /// line that is not a record is skipped with a warning.
    pub fn read(&self) -> Result<Vec<Checkpoint>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(CheckpointError::io("read", &self.path, e)),
        };
        let mut records = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Checkpoint>(line) {
                Ok(r) => records.push(r),
                Err(e) => tracing::warn!(
                    file = %self.path.display(),
                    line = n + 1,
                    "not a checkpoint record, skipped: {e}"
                ),
            }
        }
        Ok(records)
    }
}

fn open_append(path: &Path) -> Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, tandem_fs::FILE_MODE);
    options
        .open(path)
        .map_err(|e| CheckpointError::io("open", path, e))
}
