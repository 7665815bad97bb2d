//! The remote backends the user saved (name and URL; their session keys live in the keyring)
//! and the last session (backend, workspace, conversation), kept as small JSON files in the
//! app's config folder so a restart opens where the user left off.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::private_file;

/// A backend the user saved. Fields the UI adds later are kept as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SavedBackend {
    /// Stable id chosen by the UI (the keyring account of its session key derives from it).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Root URL of the agent server.
    pub base_url: String,
    /// Anything else the UI stores with it.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// Where the last session left off; every field optional, unknown ones kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct LastSession {
    /// The backend the UI pointed at (`local` or a saved backend's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The workspace folder of the last new conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The conversation that was open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    /// Anything else the UI stores with it.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// The files of the app's saved state.
#[derive(Debug, Clone)]
pub struct SavedState {
    dir: PathBuf,
}

impl SavedState {
    /// State kept in `config_dir`.
    pub fn new(config_dir: &Path) -> Self {
        Self {
            dir: config_dir.to_path_buf(),
        }
    }

    /// The saved backends, in the user's order.
    pub fn backends(&self) -> Result<Vec<SavedBackend>> {
        Ok(private_file::read_json(&self.dir.join("backends.json"))?.unwrap_or_default())
    }

    /// Replaces the saved backends.
    pub fn save_backends(&self, list: &[SavedBackend]) -> Result<()> {
        private_file::write_json(&self.dir.join("backends.json"), &list)
    }

    /// The last session, empty when none was saved.
    pub fn last_session(&self) -> Result<LastSession> {
        Ok(private_file::read_json(&self.dir.join("session.json"))?.unwrap_or_default())
    }

    /// Merges `update` into the last session: fields it sets replace, others stay.
    pub fn update_last_session(&self, update: LastSession) -> Result<LastSession> {
        let mut s = self.last_session()?;
        if update.backend.is_some() {
            s.backend = update.backend;
        }
        if update.workspace.is_some() {
            s.workspace = update.workspace;
        }
        if update.conversation.is_some() {
            s.conversation = update.conversation;
        }
        s.extra.extend(update.extra);
        private_file::write_json(&self.dir.join("session.json"), &s)?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backends_and_session_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let st = SavedState::new(dir.path());
        assert_eq!(st.backends().unwrap(), vec![]);
        let list: Vec<SavedBackend> = serde_json::from_value(
            json!([{"id": "r1", "name": "Box", "baseUrl": "http://box:8000", "color": "red"}]),
        )
        .unwrap();
        st.save_backends(&list).unwrap();
        let again = SavedState::new(dir.path());
        assert_eq!(again.backends().unwrap(), list);
        assert_eq!(
            serde_json::to_value(&again.backends().unwrap()[0]).unwrap()["color"],
            "red"
        );

        st.update_last_session(LastSession {
            backend: Some("r1".into()),
            ..Default::default()
        })
        .unwrap();
        let s = again
            .update_last_session(LastSession {
                conversation: Some("c1".into()),
                workspace: Some("/w".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"backend": "r1", "workspace": "/w", "conversation": "c1"})
        );
        assert_eq!(SavedState::new(dir.path()).last_session().unwrap(), s);
    }
}
