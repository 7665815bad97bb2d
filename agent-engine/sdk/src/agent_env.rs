//! The environment the agent's commands get: built from an allowlist, never inherited whole.
//!
//! The agent's shell (the terminal tool, which sub-agents share), `/api/bash` and a person's
//! own shell on `/sockets/pty` start from an empty environment and get only:
//!
//! - the variables of [`ALLOWED`] and the `LC_*` locale variables, from the host's environment;
//! - the names the person lists in `TANDEM_AGENT_ENV` (comma- or space-separated), e.g.
//!   `TANDEM_AGENT_ENV=GOPROXY,PIP_INDEX_URL`;
//! - what the tool sets itself (the prompt, `TERM`, pagers), and for one command the
//!   conversation's own secrets that command names (as upstream passes them).
//!
//! Credentials never pass, even when listed: `TANDEM_*` and `OH_*` variables, session keys,
//! `LLM_API_KEY`, provider keys and anything else [`is_credential_name`] recognises. A key the
//! agent needs is given to the conversation as a secret, which is masked in everything the
//! model and the timeline see.

use std::collections::BTreeMap;
use std::ffi::OsString;

pub use tandem_llm::held_env::is_credential_name;

/// Variables passed from the host's environment to the agent's commands (with `LC_*`):
/// where the person's tools, home and locale are, and nothing that authenticates anyone.
pub const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "COLORTERM",
    "NO_COLOR",
    // Where toolchains live when not in their default places.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "NODE_PATH",
    "NVM_DIR",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
];

/// The variable the person lists extra names in.
pub const EXTRA_VAR: &str = "TANDEM_AGENT_ENV";

/// Whether `name` may pass to the agent's commands when present in the host's environment
/// (`extra` being the names the person listed).
pub fn is_allowed(name: &str, extra: &[String]) -> bool {
    if is_credential_name(name) || name.starts_with("TANDEM_") || name.starts_with("OH_") {
        return false;
    }
    ALLOWED.contains(&name) || name.starts_with("LC_") || extra.iter().any(|e| e == name)
}

/// The names listed in `TANDEM_AGENT_ENV` (`value`), and a warning for each one refused
/// because it is a credential or one of Tandem's own variables.
pub fn extra_names(value: Option<&str>) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut warnings = Vec::new();
    for name in value
        .unwrap_or("")
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
    {
        if is_credential_name(name) || name.starts_with("TANDEM_") || name.starts_with("OH_") {
            warnings.push(format!(
                "{EXTRA_VAR}: `{name}` is not passed to the agent's commands: it is a credential or one of Tandem's own variables (give the conversation a secret instead)"
            ));
        } else {
            names.push(name.to_owned());
        }
    }
    (names, warnings)
}

/// The agent's environment taken from `vars` (the host's environment) by the policy above.
pub fn filter<I>(vars: I) -> BTreeMap<OsString, OsString>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
    let listed = vars
        .iter()
        .find(|(k, _)| k == EXTRA_VAR)
        .and_then(|(_, v)| v.to_str());
    let (extra, _) = extra_names(listed);
    vars.into_iter()
        .filter(|(k, _)| k.to_str().is_some_and(|k| is_allowed(k, &extra)))
        .collect()
}

/// The agent's environment from this process's environment: what a command the agent runs
/// starts with (after `env_clear`).
pub fn agent_env() -> BTreeMap<OsString, OsString> {
    filter(std::env::vars_os())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn only_the_allowlist_and_listed_names_pass() {
        let out = filter(env(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/p"),
            ("LC_ALL", "C.UTF-8"),
            ("TANDEM_SESSION_KEY", "sk-session"),
            ("TANDEM_SESSION_KEYS", "a,b"),
            ("OH_SESSION_API_KEYS_0", "sk-oh"),
            ("SESSION_API_KEY", "sk-s"),
            ("LLM_API_KEY", "sk-llm"),
            ("LLM_MODEL", "openai/gpt-5"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("GITHUB_TOKEN", "ghp"),
            ("TANDEM_HOME", "/home/p/.tandem"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"),
            ("GOPROXY", "off"),
            ("MY_TOKEN", "t"),
            (EXTRA_VAR, "GOPROXY, MY_TOKEN TANDEM_HOME"),
        ]));
        let names: Vec<&str> = out.keys().filter_map(|k| k.to_str()).collect();
        assert_eq!(names, ["GOPROXY", "HOME", "LC_ALL", "PATH"]);
    }

    #[test]
    fn listing_a_credential_is_refused_with_a_reason() {
        let (names, warnings) = extra_names(Some("FOO,OPENAI_API_KEY, TANDEM_SESSION_KEY"));
        assert_eq!(names, ["FOO"]);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("`OPENAI_API_KEY`"), "{warnings:?}");
        assert!(warnings[1].contains("`TANDEM_SESSION_KEY`"), "{warnings:?}");
    }
}
