//! The profile store: one `<name>.json` per profile in the server's `profiles/` directory
//! (an LLM config whose secret fields hold `enc:v1:` ciphertexts, see [`super::cipher`]), and
//! `.active` naming the active profile. Loaded on first use and kept in memory decrypted;
//! every change is written at once (atomically).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;
use tandem_protocol::LlmConfig;

use super::cipher::{Cipher, CipherError, KeySource, PREFIX};

/// Most profiles a server keeps (as upstream).
pub const MAX_PROFILES: usize = 50;

/// Fields of an LLM config that are secrets: encrypted at rest, never answered.
pub const SECRET_FIELDS: [&str; 4] = [
    "api_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
];

const ACTIVE_FILE: &str = ".active";
const KEY_FILE: &str = ".secret_key";

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Saving a new profile would pass [`MAX_PROFILES`].
    #[error("Profile limit reached ({MAX_PROFILES}). Delete a profile before saving a new one.")]
    Full,
    /// Reading or writing a file failed.
    #[error("the profile store at {path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Encrypting a secret failed.
    #[error(transparent)]
    Cipher(#[from] CipherError),
}

/// Why one profile's file was skipped.
#[derive(Debug, thiserror::Error)]
enum ProfileFileError {
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Whether `name` is a valid profile name: 1-64 of letters, digits, `.`, `_`, `-`, starting
/// with a letter or digit (upstream's pattern).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The name `name` addresses: `foo.json` is profile `foo` (as upstream).
pub fn canonical(name: &str) -> &str {
    name.strip_suffix(".json").unwrap_or(name)
}

#[derive(Debug, Default)]
struct Loaded {
    profiles: BTreeMap<String, LlmConfig>,
    active: Option<String>,
}

/// Saved LLM profiles.
#[derive(Debug)]
pub struct ProfileStore {
    dir: PathBuf,
    key: KeySource,
    loaded: Mutex<Option<Loaded>>,
    cipher: Mutex<Option<std::sync::Arc<Cipher>>>,
}

impl ProfileStore {
    /// A store in `dir`, its key in `dir/.secret_key`; nothing is read until first use.
    pub fn new(dir: PathBuf) -> Self {
        let key = KeySource::File(dir.join(KEY_FILE));
        Self::with_key(dir, key)
    }

    /// A store in `dir` whose secrets are sealed under `key`.
    pub fn with_key(dir: PathBuf, key: KeySource) -> Self {
        Self {
            dir,
            key,
            loaded: Mutex::new(None),
            cipher: Mutex::new(None),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> MutexGuard<'_, Option<Loaded>> {
        let mut guard = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(self.load());
        }
        guard
    }

    fn with<T>(&self, f: impl FnOnce(&mut Loaded) -> T) -> T {
        let mut guard = self.lock();
        match guard.as_mut() {
            Some(l) => f(l),
            None => f(&mut Loaded::default()),
        }
    }

    fn cipher(&self, create: bool) -> Result<std::sync::Arc<Cipher>, CipherError> {
        let mut c = self.cipher.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = c.as_ref() {
            return Ok(std::sync::Arc::clone(c));
        }
        let made = std::sync::Arc::new(Cipher::load(&self.key, create)?);
        *c = Some(std::sync::Arc::clone(&made));
        Ok(made)
    }

    fn load(&self) -> Loaded {
        let mut out = Loaded::default();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            if !valid_name(name) {
                continue;
            }
            match self.read_profile(name, &path) {
                Ok(llm) => {
                    out.profiles.insert(name.to_owned(), llm);
                }
                Err(e) => tracing::warn!("skipping the LLM profile {}: {e}", path.display()),
            }
        }
        out.active = std::fs::read_to_string(self.dir.join(ACTIVE_FILE))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|n| out.profiles.contains_key(n));
        out
    }

    fn read_profile(&self, name: &str, path: &Path) -> Result<LlmConfig, ProfileFileError> {
        let text = std::fs::read_to_string(path)?;
        let mut value: Value = serde_json::from_str(&text)?;
        if let Some(obj) = value.as_object_mut() {
            obj.remove("schema_version");
            for field in SECRET_FIELDS {
                let Some(Value::String(s)) = obj.get(field) else {
                    continue;
                };
                if !s.starts_with(PREFIX) {
                    continue;
                }
                let opened = self
                    .cipher(false)
                    .and_then(|c| c.open(&format!("{name}/{field}"), s));
                match opened {
                    Ok(plain) => {
                        obj.insert(field.to_owned(), Value::String(plain));
                    }
                    Err(e) => {
                        tracing::warn!(
                            "the {field} of LLM profile `{name}` cannot be decrypted ({e}); the profile is loaded without it"
                        );
                        obj.remove(field);
                    }
                }
            }
        }
        Ok(serde_json::from_value(value)?)
    }

    /// Every profile, by name (secrets included: for running, never for answering).
    pub fn all(&self) -> BTreeMap<String, LlmConfig> {
        self.with(|l| l.profiles.clone())
    }

    /// Profile `name`.
    pub fn get(&self, name: &str) -> Option<LlmConfig> {
        self.with(|l| l.profiles.get(canonical(name)).cloned())
    }

    /// The active profile's name.
    pub fn active(&self) -> Option<String> {
        self.with(|l| l.active.clone())
    }

    /// Saves `llm` as `name` (replacing one of that name); without `include_secrets` its
    /// secrets are dropped. [`StoreError::Full`] past [`MAX_PROFILES`].
    pub fn save(
        &self,
        name: &str,
        mut llm: LlmConfig,
        include_secrets: bool,
    ) -> Result<(), StoreError> {
        let name = canonical(name).to_owned();
        let mut value = serde_json::to_value(&llm).map_err(|e| self.io_err(&name, e))?;
        if let Some(obj) = value.as_object_mut() {
            for field in SECRET_FIELDS {
                let plain = match obj.get(field) {
                    Some(Value::String(s)) if include_secrets && !s.trim().is_empty() => s.clone(),
                    Some(_) => {
                        obj.remove(field);
                        continue;
                    }
                    None => continue,
                };
                let sealed = self
                    .cipher(true)?
                    .seal(&format!("{name}/{field}"), &plain)?;
                obj.insert(field.to_owned(), Value::String(sealed));
            }
            obj.insert("schema_version".into(), Value::from(1));
        }
        if !include_secrets {
            llm.api_key = None;
            for field in SECRET_FIELDS {
                llm.extra.remove(field);
            }
        }
        let mut guard = self.lock();
        let loaded = guard.get_or_insert_with(Loaded::default);
        if !loaded.profiles.contains_key(&name) && loaded.profiles.len() >= MAX_PROFILES {
            return Err(StoreError::Full);
        }
        let bytes = serde_json::to_vec_pretty(&value).map_err(|e| self.io_err(&name, e))?;
        self.write(&format!("{name}.json"), &bytes)?;
        loaded.profiles.insert(name, llm);
        Ok(())
    }

    /// Deletes profile `name` (nothing when absent); clears it as the active profile.
    pub fn delete(&self, name: &str) -> Result<bool, StoreError> {
        let name = canonical(name).to_owned();
        let mut guard = self.lock();
        let loaded = guard.get_or_insert_with(Loaded::default);
        let path = self.dir.join(format!("{name}.json"));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.io_err(&name, e)),
        }
        let existed = loaded.profiles.remove(&name).is_some();
        if loaded.active.as_deref() == Some(name.as_str()) {
            loaded.active = None;
            let _ = std::fs::remove_file(self.dir.join(ACTIVE_FILE));
        }
        Ok(existed)
    }

    /// Makes `name` the active profile; false when there is no such profile.
    pub fn activate(&self, name: &str) -> Result<bool, StoreError> {
        let name = canonical(name).to_owned();
        let mut guard = self.lock();
        let loaded = guard.get_or_insert_with(Loaded::default);
        if !loaded.profiles.contains_key(&name) {
            return Ok(false);
        }
        self.write(ACTIVE_FILE, name.as_bytes())?;
        loaded.active = Some(name);
        Ok(true)
    }

    fn write(&self, file: &str, bytes: &[u8]) -> Result<(), StoreError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.io_err(file, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700));
        }
        tandem_sdk::atomic_write(&self.dir.join(file), bytes).map_err(|e| self.io_err(file, e))
    }

    fn io_err(&self, file: &str, e: impl std::fmt::Display) -> StoreError {
        StoreError::Io {
            path: self.dir.join(file),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keeps_profiles_across_reopening_with_the_key_encrypted() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::new(dir.path().join("profiles"));
        let mut llm = LlmConfig::new("openai/gpt-x");
        llm.api_key = Some("sk-very-secret".into());
        llm.extra
            .insert("aws_secret_access_key".into(), Value::from("aws-secret"));
        store.save("work", llm, true).unwrap();
        assert!(store.activate("work").unwrap());
        assert!(!store.activate("nope").unwrap());
        let on_disk = std::fs::read_to_string(dir.path().join("profiles/work.json")).unwrap();
        assert!(!on_disk.contains("sk-very-secret") && !on_disk.contains("aws-secret"));
        assert!(on_disk.contains("\"model\": \"openai/gpt-x\""));

        let again = ProfileStore::new(dir.path().join("profiles"));
        let work = again.get("work.json").unwrap();
        assert_eq!(work.api_key.as_deref(), Some("sk-very-secret"));
        assert_eq!(work.extra["aws_secret_access_key"], "aws-secret");
        assert_eq!(again.active().as_deref(), Some("work"));
        assert!(again.delete("work").unwrap());
        assert!(!again.delete("work").unwrap());
        assert_eq!(again.active(), None);
        assert!(
            ProfileStore::new(dir.path().join("profiles"))
                .all()
                .is_empty()
        );
    }

    #[test]
    fn without_include_secrets_no_key_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::new(dir.path().to_owned());
        let mut llm = LlmConfig::new("openai/gpt-x");
        llm.api_key = Some("sk-1".into());
        store.save("a", llm, false).unwrap();
        assert_eq!(store.get("a").unwrap().api_key, None);
        assert_eq!(
            ProfileStore::new(dir.path().to_owned())
                .get("a")
                .unwrap()
                .api_key,
            None
        );
    }

    #[test]
    fn malformed_files_are_skipped_and_the_rest_served() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::new(dir.path().to_owned());
        let mut llm = LlmConfig::new("openai/gpt-x");
        llm.api_key = Some("sk-1".into());
        store.save("good", llm, true).unwrap();
        std::fs::write(dir.path().join("broken.json"), "{not json").unwrap();
        std::fs::write(dir.path().join("list.json"), "[1, 2]").unwrap();
        std::fs::write(dir.path().join("nomodel.json"), r#"{"api_key": 3}"#).unwrap();
        std::fs::write(dir.path().join("binary.json"), [0xff, 0xfe, 0x00]).unwrap();
        std::fs::create_dir(dir.path().join("folder.json")).unwrap();
        std::fs::write(
            dir.path().join("forged.json"),
            r#"{"model": "m", "api_key": "enc:v1:AAAA"}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join(".active"), "broken").unwrap();

        let again = ProfileStore::new(dir.path().to_owned());
        let names: Vec<String> = again.all().into_keys().collect();
        assert_eq!(names, ["forged", "good"]);
        assert_eq!(again.get("good").unwrap().api_key.as_deref(), Some("sk-1"));
        assert_eq!(again.get("forged").unwrap().api_key, None, "undecryptable");
        assert_eq!(again.active(), None, "the active profile must exist");
        // It keeps serving: a profile saved over a broken file replaces it.
        again
            .save("broken", LlmConfig::new("openai/gpt-y"), true)
            .unwrap();
        assert_eq!(
            ProfileStore::new(dir.path().to_owned())
                .get("broken")
                .unwrap()
                .model,
            "openai/gpt-y"
        );
    }

    #[test]
    fn names_follow_upstreams_pattern() {
        for ok in ["a", "work", "gpt-4.1_mini", "A9"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", ".hidden", "-x", "a/b", "a b", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
