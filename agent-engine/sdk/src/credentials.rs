//! Every credential value this process knows, masked in what every conversation records and
//! sends: events, observations, the terminal's viewers and LLM requests.
//!
//! The agent's commands never get the host's credentials (see [`crate::agent_env`]); this is
//! the second line: should a value reach an output anyway (a file the agent reads, a page, a
//! tool's error), it is replaced by `<secret-hidden>` before the model or a person sees it.
//! The host adds what it learns ([`known_credentials`]): session keys, provider keys from the
//! environment (held ones included, see [`tandem_llm::held_env`]), LLM profiles' keys, MCP
//! servers' configured environment, header and auth values, and every conversation's secrets.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};

use crate::secrets::Masker;

/// Values shorter than this are not masked: they would hide ordinary words.
pub const MIN_MASKED_LEN: usize = 8;

/// A set of credential values that only grows.
#[derive(Default)]
pub struct KnownCredentials {
    values: RwLock<BTreeSet<String>>,
    version: AtomicU64,
}

impl std::fmt::Debug for KnownCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownCredentials")
            .field("count", &self.values().len())
            .finish()
    }
}

impl KnownCredentials {
    /// Adds `values` (blank and short ones are skipped).
    pub fn add<I, S>(&self, values: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut added = false;
        let mut set = self.values.write().unwrap_or_else(|e| e.into_inner());
        for v in values {
            let v = v.as_ref().trim();
            if v.chars().count() >= MIN_MASKED_LEN && !set.contains(v) {
                set.insert(v.to_owned());
                added = true;
            }
        }
        if added {
            self.version.fetch_add(1, Ordering::Release);
        }
    }

    /// Changes each time a value is added.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The values.
    pub fn values(&self) -> Vec<String> {
        self.values
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// A masker for the values.
    pub fn masker(&self) -> Masker {
        Masker::new(self.values())
    }
}

/// The process's credentials; the held environment's values are in it from the start.
pub fn known_credentials() -> &'static KnownCredentials {
    static KNOWN: OnceLock<KnownCredentials> = OnceLock::new();
    KNOWN.get_or_init(|| {
        let known = KnownCredentials::default();
        known.add(tandem_llm::held_env::held_values());
        known.add(tandem_llm::held_env::credential_vars_in_env().values());
        known
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_skips_short_values_and_masks() {
        let k = KnownCredentials::default();
        let v0 = k.version();
        k.add(["short", "", "sk-long-credential"]);
        assert_eq!(k.values(), ["sk-long-credential"]);
        let v1 = k.version();
        assert!(v1 > v0);
        k.add(["sk-long-credential"]);
        assert_eq!(k.version(), v1, "nothing new, same version");
        assert_eq!(
            k.masker().mask("x sk-long-credential y"),
            "x <secret-hidden> y"
        );
    }
}
