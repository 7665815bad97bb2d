//! Where the CLI's configuration comes from: flags, then environment, then
//! `$TANDEM_HOME/settings.json`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use tandem_protocol::{ConfirmationPolicy, LlmConfig, SecurityRisk};

/// `$TANDEM_HOME`, default `~/.tandem`.
pub fn tandem_home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("TANDEM_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    let home = dirs::home_dir().context("cannot find the home directory; set TANDEM_HOME")?;
    Ok(home.join(".tandem"))
}

/// The settings file's shape. Unknown fields are rejected so that typos are caught.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    /// LLM defaults.
    #[serde(default)]
    pub llm: LlmSettings,
    /// Default confirmation policy: `always`, `risky` or `never`.
    #[serde(default)]
    pub confirm: Option<String>,
}

/// The `llm` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// `provider/model`.
    pub model: Option<String>,
    /// Provider base URL.
    pub base_url: Option<String>,
    /// API key.
    pub api_key: Option<String>,
}

impl SettingsFile {
    /// Reads `home/settings.json`; a missing file is empty settings, a broken one an error
    /// naming the file.
    pub fn load(home: &Path) -> Result<Self> {
        let path = home.join("settings.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("invalid settings file {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => {
                Err(e).with_context(|| format!("cannot read settings file {}", path.display()))
            }
        }
    }
}

/// LLM choices given on the command line.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct LlmFlags {
    /// Model as `provider/model` (env LLM_MODEL).
    #[arg(long)]
    pub model: Option<String>,
    /// Provider base URL (env LLM_BASE_URL).
    #[arg(long)]
    pub base_url: Option<String>,
    /// API key (env LLM_API_KEY). Never written to the conversation.
    #[arg(long)]
    pub api_key: Option<String>,
    /// `demo` runs a scripted demo LLM on loopback, for trying Tandem without a provider.
    #[arg(long, value_name = "demo")]
    pub llm: Option<String>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Resolves the LLM config: flags > env > settings > `base` (the conversation's persisted
/// config on resume). `None` when nothing names a model.
pub fn resolve_llm(
    flags: &LlmFlags,
    settings: &SettingsFile,
    base: Option<&LlmConfig>,
) -> Result<Option<LlmConfig>> {
    let model = flags
        .model
        .clone()
        .or_else(|| env("LLM_MODEL"))
        .or_else(|| settings.llm.model.clone())
        .or_else(|| base.map(|b| b.model.clone()));
    let Some(model) = model else { return Ok(None) };
    if model.trim().is_empty() || model.contains(char::is_whitespace) {
        bail!("invalid model name `{model}`: expected provider/model, e.g. openai/gpt-5");
    }
    let mut config = match base {
        Some(b) if b.model == model => b.clone(),
        _ => LlmConfig::new(model),
    };
    if let Some(url) = flags
        .base_url
        .clone()
        .or_else(|| env("LLM_BASE_URL"))
        .or_else(|| settings.llm.base_url.clone())
    {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("invalid base URL `{url}`: it must start with http:// or https://");
        }
        config.base_url = Some(url);
    }
    if let Some(n) = env("LLM_NUM_RETRIES") {
        config.num_retries = n
            .parse()
            .with_context(|| format!("invalid LLM_NUM_RETRIES `{n}`: expected a whole number"))?;
    }
    config.api_key = flags
        .api_key
        .clone()
        .or_else(|| env("LLM_API_KEY"))
        .or_else(|| settings.llm.api_key.clone());
    Ok(Some(config))
}

/// Parses `always` / `risky` / `never`.
pub fn parse_policy(s: &str) -> Result<ConfirmationPolicy> {
    Ok(match s {
        "always" => ConfirmationPolicy::AlwaysConfirm,
        "never" => ConfirmationPolicy::NeverConfirm,
        "risky" => ConfirmationPolicy::ConfirmRisky {
            threshold: SecurityRisk::High,
            confirm_unknown: true,
        },
        other => bail!("invalid confirmation policy `{other}`: expected always, risky or never"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_settings_and_base() {
        let flags = LlmFlags {
            model: Some("openai/a".into()),
            ..Default::default()
        };
        let settings = SettingsFile {
            llm: LlmSettings {
                model: Some("openai/b".into()),
                base_url: Some("http://x/v1".into()),
                api_key: Some("k".into()),
            },
            confirm: None,
        };
        let c = resolve_llm(&flags, &settings, None).unwrap().unwrap();
        assert_eq!(c.model, "openai/a");
        assert_eq!(c.base_url.as_deref(), Some("http://x/v1"));
        assert_eq!(c.api_key.as_deref(), Some("k"));
    }

    #[test]
    fn bad_values_are_named() {
        let flags = LlmFlags {
            model: Some("m".into()),
            base_url: Some("ftp://x".into()),
            ..Default::default()
        };
        let err = resolve_llm(&flags, &SettingsFile::default(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ftp://x"), "{err}");
        assert!(
            parse_policy("sometimes")
                .unwrap_err()
                .to_string()
                .contains("sometimes")
        );
    }
}
