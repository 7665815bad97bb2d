//! Credential variables the process holds in memory instead of in its environment.
//!
//! `/proc/<pid>/environ` shows the environment a process started with to every process of the
//! same user, and removing a variable later does not change what it shows. Locally the agent's
//! commands run as the person who started Tandem, so a server that keeps `LLM_API_KEY` or its
//! session key in its environment hands them to the agent. `tandem serve` therefore re-executes
//! itself at start without its credential variables ([`is_credential_name`]) and passes their
//! values to the new process image through a pipe, which calls [`hold`] once. Whatever reads a
//! credential variable asks [`var`]: the held value first, then the environment (for programs
//! that never re-execute, such as the desktop app and the tests).

use std::collections::BTreeMap;
use std::sync::OnceLock;

static HELD: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// Whether an environment variable of this name holds a credential, by Tandem's, upstream's
/// and the usual naming: session keys (`TANDEM_SESSION_KEY(S)`, `OH_SESSION_API_KEYS_<n>`,
/// `SESSION_API_KEY`), the profiles' encryption secret (`OH_SECRET_KEY`), provider and service
/// keys (`*_API_KEY`, `*_API_KEYS`, `*API_KEY*`), tokens (`*_TOKEN`, `*_TOKENS`), and names
/// holding `SECRET`, `PASSWORD`, `PASSWD`, `PRIVATE_KEY`, `ACCESS_KEY` or `CREDENTIAL`.
/// Case-insensitive. Such variables never reach the agent's commands and are taken out of
/// `tandem serve`'s own environment.
pub fn is_credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.starts_with("TANDEM_SESSION_KEY")
        || n.starts_with("OH_SESSION_API_KEYS")
        || n == "SESSION_API_KEY"
        || n == "TOKEN"
        || n.ends_with("_TOKEN")
        || n.ends_with("_TOKENS")
        || [
            "API_KEY",
            "APIKEY",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "PRIVATE_KEY",
            "ACCESS_KEY",
            "CREDENTIAL",
        ]
        .iter()
        .any(|part| n.contains(part))
}

/// The credential variables of this process's environment that have a value (never empty).
pub fn credential_vars_in_env() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| is_credential_name(k) && !v.trim().is_empty())
        .collect()
}

/// Keeps `vars` as this process's credential variables; false when some were held already (the
/// first set stays).
pub fn hold(vars: BTreeMap<String, String>) -> bool {
    HELD.set(vars).is_ok()
}

/// The variable `name`: the held value, else the environment's; `None` when unset or blank.
pub fn var(name: &str) -> Option<String> {
    HELD.get()
        .and_then(|h| h.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.trim().is_empty())
}

/// The held credential values (none unless [`hold`] was called), for masking.
pub fn held_values() -> Vec<String> {
    HELD.get()
        .map(|h| h.values().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_recognised() {
        for name in [
            "TANDEM_SESSION_KEY",
            "TANDEM_SESSION_KEYS",
            "OH_SESSION_API_KEYS_0",
            "SESSION_API_KEY",
            "OH_SECRET_KEY",
            "LLM_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "openrouter_api_key",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LLM_MODEL",
            "LLM_BASE_URL",
            "TANDEM_HOME",
            "TERM",
            "TOKENIZERS_PARALLELISM",
            "KEYMAP",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
    }
}
