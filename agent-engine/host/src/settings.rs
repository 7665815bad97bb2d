//! Tandem's own settings, read the same way by the `tandem` CLI, `tandem serve` and the desktop
//! app: where `$TANDEM_HOME` is ([`tandem_home`]), what `$TANDEM_HOME/settings.json` says
//! ([`SettingsFile`]) and which LLM they name ([`resolve_llm`] for a run, [`server_llm`] for an
//! agent server's default profile).
//!
//! One loader, two policies for a bad file. [`SettingsFile::load`] is strict: an unreadable
//! file, broken JSON, a wrong type or an unknown field (a typo such as `modle`) is an error
//! naming the file, and the CLI stops with it. [`SettingsFile::load_lenient`] is the desktop's:
//! it keeps what it can read and says what it ignored, since a bad file must not keep the app
//! from opening.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::LlmConfig;

use crate::env::{llm_from_env, var as env};

/// The settings file's name inside `$TANDEM_HOME`.
pub const SETTINGS_FILE: &str = "settings.json";

/// The fields a settings file may hold, for error messages (kept in step with [`SettingsFile`]
/// and [`LlmSettings`]; a test checks that each one parses).
const KNOWN_FIELDS: &str = "llm.model, llm.base_url, llm.api_key and confirm";

/// What can be wrong with the settings. Each message is one line naming the culprit.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Neither `TANDEM_HOME` nor a home directory is known.
    #[error("cannot find the home directory; set TANDEM_HOME")]
    NoHome,
    /// The settings file exists but cannot be read.
    #[error("cannot read settings file {}: {cause}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The settings file is not JSON of the right shape.
    #[error("invalid settings file {}: {cause}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parse error, with its line and column.
        cause: serde_json::Error,
    },
    /// The settings file has fields Tandem does not know (usually a typo).
    #[error(
        "invalid settings file {}: unknown field {} (it may hold {KNOWN_FIELDS})",
        path.display(),
        quoted(fields)
    )]
    UnknownFields {
        /// The file.
        path: PathBuf,
        /// The unknown fields, as dotted paths (`llm.modle`).
        fields: Vec<String>,
    },
    /// A model name that cannot be a `provider/model`.
    #[error("invalid model name `{0}`: expected provider/model, e.g. openai/gpt-5")]
    Model(String),
    /// A base URL that is not HTTP.
    #[error("invalid base URL `{0}`: it must start with http:// or https://")]
    BaseUrl(String),
    /// `LLM_NUM_RETRIES` is not a whole number.
    #[error("invalid LLM_NUM_RETRIES `{0}`: expected a whole number")]
    NumRetries(String),
}

/// `a`, `b`: field names for a message.
fn quoted(fields: &[String]) -> String {
    let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    quoted.join(", ")
}

/// `$TANDEM_HOME`, default `~/.tandem`: settings, conversations, profiles and their key file.
///
/// Without `TANDEM_HOME` and without a home directory this is an error, never a fallback to
/// the temporary folder: what lives here includes API keys and the key that encrypts saved
/// profiles, which a shared, world-writable and often wiped `/tmp` would expose to other users
/// or lose. The error says to set `TANDEM_HOME`; the CLI exits with it, and the desktop shows
/// it in place of the local backend and still opens.
pub fn tandem_home() -> Result<PathBuf, SettingsError> {
    tandem_sdk::tandem_home().ok_or(SettingsError::NoHome)
}

/// `$TANDEM_HOME/settings.json`:
/// `{"llm": {"model": "openai/gpt-5", "base_url": "...", "api_key": "..."}, "confirm": "risky"}`.
/// Every field is optional.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
pub struct SettingsFile {
    /// LLM defaults.
    #[serde(default)]
    pub llm: LlmSettings,
    /// Default confirmation policy of `tandem run`: `always`, `risky` or `never`.
    #[serde(default)]
    pub confirm: Option<String>,
    /// Fields this version does not know; the loaders report them.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// An LLM choice: the settings file's `llm` section, or the same three parts from the command
/// line. Its `Debug` never shows the key.
#[derive(Default, Clone, PartialEq, Deserialize)]
pub struct LlmSettings {
    /// `provider/model`.
    pub model: Option<String>,
    /// Provider base URL.
    pub base_url: Option<String>,
    /// API key.
    pub api_key: Option<String>,
    /// Fields this version does not know; the loaders report them.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSettings")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("unknown", &self.unknown)
            .finish()
    }
}

impl SettingsFile {
    /// The settings file of `home`.
    pub fn path(home: &Path) -> PathBuf {
        home.join(SETTINGS_FILE)
    }

    /// Reads `home/settings.json` strictly: a missing file is empty settings; an unreadable or
    /// malformed one, or one with unknown fields, is an error naming the file.
    pub fn load(home: &Path) -> Result<Self, SettingsError> {
        let path = Self::path(home);
        let settings = Self::read(&path)?;
        let fields = settings.unknown_fields();
        if fields.is_empty() {
            Ok(settings)
        } else {
            Err(SettingsError::UnknownFields { path, fields })
        }
    }

    /// Reads `home/settings.json` leniently, for a program that must start whatever the file
    /// says: unknown fields are ignored, and a file that cannot be read or parsed counts as
    /// empty settings. The warning, when there is one, names the file and what was ignored.
    pub fn load_lenient(home: &Path) -> (Self, Option<String>) {
        let path = Self::path(home);
        match Self::read(&path) {
            Ok(settings) => {
                let fields = settings.unknown_fields();
                let warning = (!fields.is_empty()).then(|| {
                    format!(
                        "settings file {}: ignoring unknown field {} (it may hold {KNOWN_FIELDS})",
                        path.display(),
                        quoted(&fields)
                    )
                });
                (settings, warning)
            }
            Err(error) => (
                Self::default(),
                Some(format!("{error}; it is ignored and the defaults apply")),
            ),
        }
    }

    fn read(path: &Path) -> Result<Self, SettingsError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|cause| SettingsError::Invalid {
                path: path.to_owned(),
                cause,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(cause) => Err(SettingsError::Read {
                path: path.to_owned(),
                cause,
            }),
        }
    }

    /// The fields Tandem does not know, as dotted paths (`theme`, `llm.modle`).
    pub fn unknown_fields(&self) -> Vec<String> {
        let top = self.unknown.keys().cloned();
        let llm = self.llm.unknown.keys().map(|k| format!("llm.{k}"));
        top.chain(llm).collect()
    }
}

/// Resolves the LLM of a run: `flags` (the command line) > environment (`LLM_MODEL`,
/// `LLM_BASE_URL`, `LLM_API_KEY`, `LLM_NUM_RETRIES`) > the settings file's `llm` > `base` (the
/// conversation's persisted config on resume), part by part. A blank field of the settings
/// file counts as absent, as a blank variable does. `None` when nothing names a model; an error
/// for a model or base URL that cannot work.
pub fn resolve_llm(
    flags: &LlmSettings,
    settings: &SettingsFile,
    base: Option<&LlmConfig>,
) -> Result<Option<LlmConfig>, SettingsError> {
    let model = flags
        .model
        .clone()
        .or_else(|| env("LLM_MODEL"))
        .or_else(|| given(&settings.llm.model))
        .or_else(|| base.map(|b| b.model.clone()));
    let Some(model) = model else { return Ok(None) };
    if model.trim().is_empty() || model.contains(char::is_whitespace) {
        return Err(SettingsError::Model(model));
    }
    let mut config = match base {
        Some(b) if b.model == model => b.clone(),
        _ => LlmConfig::new(model),
    };
    if let Some(url) = flags
        .base_url
        .clone()
        .or_else(|| env("LLM_BASE_URL"))
        .or_else(|| given(&settings.llm.base_url))
    {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(SettingsError::BaseUrl(url));
        }
        config.base_url = Some(url);
    }
    if let Some(n) = env("LLM_NUM_RETRIES") {
        config.num_retries = n.parse().map_err(|_| SettingsError::NumRetries(n))?;
    }
    config.api_key = flags
        .api_key
        .clone()
        .or_else(|| env("LLM_API_KEY"))
        .or_else(|| given(&settings.llm.api_key));
    Ok(Some(config))
}

/// A settings value unless blank.
fn given(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.trim().is_empty())
}

/// The default LLM of an agent server (`tandem serve`'s `default` profile, the desktop's local
/// backend): the environment's `LLM_MODEL`, `LLM_BASE_URL` and `LLM_API_KEY` as
/// `tandem_server::ServerConfig::from_env` reads them, else
/// [`resolve_llm`] over the settings file. `None` when neither names a model.
pub fn server_llm(settings: &SettingsFile) -> Result<Option<LlmConfig>, SettingsError> {
    match llm_from_env() {
        Some(llm) => Ok(Some(llm)),
        None => resolve_llm(&LlmSettings::default(), settings, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::write(dir.join(SETTINGS_FILE), text).unwrap();
    }

    #[test]
    fn flags_beat_settings_and_base() {
        let flags = LlmSettings {
            model: Some("openai/a".into()),
            ..Default::default()
        };
        let settings = SettingsFile {
            llm: LlmSettings {
                model: Some("openai/b".into()),
                base_url: Some("http://x/v1".into()),
                api_key: Some("k".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let c = resolve_llm(&flags, &settings, None).unwrap().unwrap();
        assert_eq!(c.model, "openai/a");
        assert_eq!(c.base_url.as_deref(), Some("http://x/v1"));
        assert_eq!(c.api_key.as_deref(), Some("k"));
    }

    #[test]
    fn bad_values_are_named() {
        let flags = LlmSettings {
            model: Some("m".into()),
            base_url: Some("ftp://x".into()),
            ..Default::default()
        };
        let err = resolve_llm(&flags, &SettingsFile::default(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ftp://x"), "{err}");
        let flags = LlmSettings {
            model: Some("open ai/x".into()),
            ..Default::default()
        };
        let err = resolve_llm(&flags, &SettingsFile::default(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`open ai/x`"), "{err}");
    }

    #[test]
    fn blank_settings_fields_are_absent() {
        let settings = SettingsFile {
            llm: LlmSettings {
                model: Some("openai/gpt-5".into()),
                base_url: Some(" ".into()),
                api_key: Some(String::new()),
                ..Default::default()
            },
            ..Default::default()
        };
        let c = resolve_llm(&LlmSettings::default(), &settings, None)
            .unwrap()
            .unwrap();
        assert_eq!((c.base_url, c.api_key), (None, None));
    }

    #[test]
    fn a_missing_file_is_empty_settings() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            SettingsFile::load(dir.path()).unwrap(),
            SettingsFile::default()
        );
        assert_eq!(
            SettingsFile::load_lenient(dir.path()),
            (SettingsFile::default(), None)
        );
    }

    #[test]
    fn every_known_field_parses() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            r#"{"llm": {"model": "openai/gpt-5", "base_url": "https://x/v1", "api_key": "sk-1"},
                "confirm": "risky"}"#,
        );
        let s = SettingsFile::load(dir.path()).unwrap();
        assert_eq!(s.llm.model.as_deref(), Some("openai/gpt-5"));
        assert_eq!(s.llm.base_url.as_deref(), Some("https://x/v1"));
        assert_eq!(s.llm.api_key.as_deref(), Some("sk-1"));
        assert_eq!(s.confirm.as_deref(), Some("risky"));
        for field in ["llm.model", "llm.base_url", "llm.api_key", "confirm"] {
            assert!(KNOWN_FIELDS.contains(field), "{field}");
        }
        assert!(
            !format!("{s:?}").contains("sk-1"),
            "the key stays out of Debug"
        );
    }

    #[test]
    fn unknown_fields_fail_strictly_and_are_ignored_leniently() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            r#"{"llm": {"model": "openai/gpt-5", "modle": "x"}, "theme": "dark"}"#,
        );
        let err = SettingsFile::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains(SETTINGS_FILE), "{err}");
        assert!(err.contains("`theme`, `llm.modle`"), "{err}");
        assert!(
            err.contains("llm.model"),
            "the known fields are listed: {err}"
        );

        let (s, warning) = SettingsFile::load_lenient(dir.path());
        assert_eq!(s.llm.model.as_deref(), Some("openai/gpt-5"));
        let warning = warning.unwrap();
        assert!(
            warning.contains("ignoring unknown field `theme`, `llm.modle`"),
            "{warning}"
        );
    }

    #[test]
    fn a_broken_file_fails_strictly_and_is_defaults_leniently() {
        let dir = tempfile::tempdir().unwrap();
        for text in [r#"{"llm": "#, r#"{"llm": {"model": 5}}"#, "[]"] {
            write(dir.path(), text);
            let err = SettingsFile::load(dir.path()).unwrap_err().to_string();
            assert!(err.starts_with("invalid settings file "), "{err}");
            assert!(err.contains(SETTINGS_FILE), "{err}");
            let (s, warning) = SettingsFile::load_lenient(dir.path());
            assert_eq!(s, SettingsFile::default());
            let warning = warning.unwrap();
            assert!(warning.contains("defaults apply"), "{warning}");
        }
    }
}
