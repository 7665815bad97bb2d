//! Where the CLI's configuration comes from: flags, then environment, then
//! `$TANDEM_HOME/settings.json`. The settings file, `TANDEM_HOME` and the LLM resolution are
//! `tandem_host::settings`, shared with the desktop app; this module adds the flags and the
//! CLI's strict policy (a bad settings file is an error, exit 2).

use std::path::Path;

use anyhow::{Result, bail};
use tandem_host::settings::LlmSettings;
pub use tandem_host::settings::{SettingsFile, tandem_home};
use tandem_protocol::{ConfirmationPolicy, LlmConfig, SecurityRisk};

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

impl LlmFlags {
    /// The model, base URL and key the flags name.
    fn choice(&self) -> LlmSettings {
        LlmSettings {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            ..LlmSettings::default()
        }
    }
}

/// Resolves the LLM config: flags > env > settings > `base` (the conversation's persisted
/// config on resume), as [`tandem_host::settings::resolve_llm`] does. `None` when nothing
/// names a model.
pub fn resolve_llm(
    flags: &LlmFlags,
    settings: &SettingsFile,
    base: Option<&LlmConfig>,
) -> Result<Option<LlmConfig>> {
    Ok(tandem_host::settings::resolve_llm(
        &flags.choice(),
        settings,
        base,
    )?)
}

/// `tandem settings`: prints where the settings come from and the LLM and policy they give a
/// run without flags (never the API key). With `check_llm` it prints nothing and answers 0
/// when the environment or the settings file names a model, 1 when nothing does.
pub fn show(home: &Path, settings: &SettingsFile, check_llm: bool) -> Result<u8> {
    let llm = resolve_llm(&LlmFlags::default(), settings, None)?;
    if check_llm {
        return Ok(if llm.is_some() { 0 } else { 1 });
    }
    let path = SettingsFile::path(home);
    println!("home      {}", home.display());
    println!(
        "settings  {}{}",
        path.display(),
        if path.exists() { "" } else { " (absent)" }
    );
    match &llm {
        Some(c) => {
            println!("llm       {}", c.model);
            if let Some(url) = &c.base_url {
                println!("base url  {url}");
            }
            println!(
                "api key   {}",
                if c.api_key.is_some() {
                    "set"
                } else {
                    "not set"
                }
            );
        }
        None => println!("llm       none (set LLM_MODEL or llm.model, or use --llm demo)"),
    }
    println!(
        "confirm   {}",
        settings.confirm.as_deref().unwrap_or("never")
    );
    Ok(0)
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
    fn flags_are_the_first_source() {
        let flags = LlmFlags {
            model: Some("openai/a".into()),
            api_key: Some("k".into()),
            ..Default::default()
        };
        let c = resolve_llm(&flags, &SettingsFile::default(), None)
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.model.as_str(), c.api_key.as_deref()),
            ("openai/a", Some("k"))
        );
    }

    #[test]
    fn check_llm_answers_whether_a_model_is_named() {
        let home = std::path::Path::new("/nonexistent");
        let mut settings = SettingsFile::default();
        let expected = u8::from(std::env::var_os("LLM_MODEL").is_none());
        assert_eq!(show(home, &settings, true).unwrap(), expected);
        settings.llm.model = Some("openai/gpt-5".into());
        assert_eq!(show(home, &settings, true).unwrap(), 0);
        settings.llm.base_url = Some("ftp://x".into());
        if std::env::var_os("LLM_BASE_URL").is_none() {
            let err = show(home, &settings, true).unwrap_err().to_string();
            assert!(err.contains("ftp://x"), "{err}");
        }
    }

    #[test]
    fn a_bad_policy_is_named() {
        assert!(
            parse_policy("sometimes")
                .unwrap_err()
                .to_string()
                .contains("sometimes")
        );
    }
}
