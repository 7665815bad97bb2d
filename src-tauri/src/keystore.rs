//! Secrets of the desktop app (LLM keys, remote backends' session keys): the OS keyring through
//! the `keyring` crate (the Secret Service on Linux, Keychain on macOS, the Credential Manager
//! on Windows). When no keyring answers — a headless Linux without a D-Bus session or without a
//! Secret Service daemon — secrets go to a 0600 JSON file in the app's config folder instead,
//! and [`KeyStore::status`] carries a warning the UI shows wherever keys are entered.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::private_file;

/// The keyring service name used when the UI names none.
pub const DEFAULT_SERVICE: &str = "tandem";

/// How long the start-up probe waits for the Secret Service (a locked keyring may try to show
/// an unlock prompt that nobody can answer on a headless machine).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(4);

/// Where secrets are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// The OS keyring.
    Os,
    /// The 0600 fallback file.
    File,
}

/// What the UI is told about the keyring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct KeyringStatus {
    /// Where secrets go.
    pub backend: Backend,
    /// Set when secrets are not in a real keyring: a sentence for people saying where they
    /// are kept instead.
    pub warning: Option<String>,
    /// With `warning`: the technical reason no keyring was used (e.g. the D-Bus error), for
    /// those who want to fix it.
    pub cause: Option<String>,
    /// The fallback file, when it is used.
    pub file: Option<PathBuf>,
}

/// The secrets store of the app.
#[derive(Debug)]
pub struct KeyStore {
    backend: Backend,
    file: PathBuf,
    reason: Option<String>,
    lock: Mutex<()>,
}

type FileSecrets = BTreeMap<String, BTreeMap<String, String>>;

impl KeyStore {
    /// Uses the OS keyring when a write/read/delete probe succeeds within [`PROBE_TIMEOUT`],
    /// else the fallback file `<config_dir>/secrets.json`.
    pub fn detect(config_dir: &Path) -> Self {
        match probe_os_keyring(PROBE_TIMEOUT) {
            Ok(()) => Self::os(config_dir),
            Err(reason) => {
                tracing::warn!("no usable keyring ({reason}); secrets go to a 0600 file");
                Self::file(config_dir, reason.to_string())
            }
        }
    }

    /// The OS keyring (no probe).
    pub fn os(config_dir: &Path) -> Self {
        Self {
            backend: Backend::Os,
            file: config_dir.join("secrets.json"),
            reason: None,
            lock: Mutex::new(()),
        }
    }

    /// The fallback file `<config_dir>/secrets.json`; `reason` says why no keyring is used.
    pub fn file(config_dir: &Path, reason: impl Into<String>) -> Self {
        Self {
            backend: Backend::File,
            file: config_dir.join("secrets.json"),
            reason: Some(reason.into()),
            lock: Mutex::new(()),
        }
    }

    /// Where secrets go and, when that is not a keyring, the warning to show.
    pub fn status(&self) -> KeyringStatus {
        match self.backend {
            Backend::Os => KeyringStatus {
                backend: Backend::Os,
                warning: None,
                cause: None,
                file: None,
            },
            Backend::File => KeyringStatus {
                backend: Backend::File,
                warning: Some(format!(
                    "No system keyring is available, so Tandem keeps your API keys and session \
                     keys in the file {}, which only your user account can read.",
                    self.file.display(),
                )),
                cause: Some(self.reason.clone().unwrap_or_else(|| "unknown".to_owned())),
                file: Some(self.file.clone()),
            },
        }
    }

    /// The secret of `account` under `service`, if any.
    pub fn get(&self, service: &str, account: &str) -> Result<Option<String>> {
        match self.backend {
            Backend::Os => match entry(service, account)?.get_password() {
                Ok(s) => Ok(Some(s)),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(Error::Keyring(e.to_string())),
            },
            Backend::File => {
                let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                let all = self.read_file()?;
                Ok(all.get(service).and_then(|m| m.get(account)).cloned())
            }
        }
    }

    /// Stores `secret` for `account` under `service`, replacing any earlier one.
    pub fn set(&self, service: &str, account: &str, secret: &str) -> Result<()> {
        match self.backend {
            Backend::Os => entry(service, account)?
                .set_password(secret)
                .map_err(|e| Error::Keyring(e.to_string())),
            Backend::File => {
                let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                let mut all = self.read_file()?;
                all.entry(service.to_owned())
                    .or_default()
                    .insert(account.to_owned(), secret.to_owned());
                private_file::write_json(&self.file, &all)
            }
        }
    }

    /// Forgets the secret of `account` under `service` (no error when there was none).
    pub fn delete(&self, service: &str, account: &str) -> Result<()> {
        match self.backend {
            Backend::Os => match entry(service, account)?.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(Error::Keyring(e.to_string())),
            },
            Backend::File => {
                let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                let mut all = self.read_file()?;
                let removed = all
                    .get_mut(service)
                    .and_then(|m| m.remove(account))
                    .is_some();
                all.retain(|_, m| !m.is_empty());
                if removed {
                    private_file::write_json(&self.file, &all)
                } else {
                    Ok(())
                }
            }
        }
    }

    fn read_file(&self) -> Result<FileSecrets> {
        Ok(private_file::read_json(&self.file)?.unwrap_or_default())
    }
}

fn entry(service: &str, account: &str) -> Result<keyring::Entry> {
    if service.is_empty() || account.is_empty() {
        return Err(Error::Keyring(
            "service and account must not be empty".into(),
        ));
    }
    keyring::Entry::new(service, account).map_err(|e| Error::Keyring(e.to_string()))
}

/// Why the OS keyring did not pass the probe.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The probe's thread could not be started.
    #[error("cannot start the keyring probe: {0}")]
    Thread(std::io::Error),
    /// The keyring did not answer in time (a locked or hung Secret Service).
    #[error("the Secret Service did not answer within {} s", .0.as_secs())]
    Timeout(Duration),
    /// No Secret Service on the session bus.
    #[error("no Secret Service: {0}")]
    NoService(String),
    /// The probe's entry could not be made.
    #[error("{0}")]
    Entry(keyring::Error),
    /// Storing the probe secret failed.
    #[error("cannot store a secret: {0}")]
    Store(keyring::Error),
    /// Reading it back failed.
    #[error("cannot read a secret back: {0}")]
    ReadBack(keyring::Error),
    /// What came back was not what was stored.
    #[error("the keyring returned a different secret")]
    Mismatch,
}

/// Writes, reads back and deletes a probe secret in the OS keyring on a helper thread, giving
/// up after `timeout` (the thread is left to finish on its own then).
pub fn probe_os_keyring(timeout: Duration) -> std::result::Result<(), ProbeError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("keyring-probe".into())
        .spawn(move || {
            let _ = tx.send(probe_once());
        });
    if let Err(e) = spawned {
        return Err(ProbeError::Thread(e));
    }
    match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(_) => Err(ProbeError::Timeout(timeout)),
    }
}

fn probe_once() -> std::result::Result<(), ProbeError> {
    if let Err(e) = keyring::Entry::store_status() {
        return Err(ProbeError::NoService(e.to_string()));
    }
    let e =
        keyring::Entry::new(DEFAULT_SERVICE, "tandem-keyring-probe").map_err(ProbeError::Entry)?;
    let value = format!("probe-{}", std::process::id());
    e.set_password(&value).map_err(ProbeError::Store)?;
    let back = e.get_password().map_err(ProbeError::ReadBack)?;
    let _ = e.delete_credential();
    if back == value {
        Ok(())
    } else {
        Err(ProbeError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_store_round_trip_is_private_and_warns() {
        let dir = tempfile::tempdir().unwrap();
        let ks = KeyStore::file(dir.path(), "no D-Bus session");
        let st = ks.status();
        assert_eq!(st.backend, Backend::File);
        let warning = st.warning.as_deref().unwrap();
        assert!(warning.contains("secrets.json"), "{warning}");
        // The sentence is for people; the technical reason comes apart.
        assert!(!warning.contains("no D-Bus session"), "{warning}");
        assert_eq!(st.cause.as_deref(), Some("no D-Bus session"));
        assert_eq!(ks.get("tandem", "a").unwrap(), None);
        ks.set("tandem", "a", "s1").unwrap();
        ks.set("tandem", "b", "s2").unwrap();
        ks.set("tandem", "a", "s3").unwrap();
        assert_eq!(ks.get("tandem", "a").unwrap().as_deref(), Some("s3"));
        ks.delete("tandem", "a").unwrap();
        ks.delete("tandem", "a").unwrap();
        assert_eq!(ks.get("tandem", "a").unwrap(), None);
        assert_eq!(ks.get("tandem", "b").unwrap().as_deref(), Some("s2"));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("secrets.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
