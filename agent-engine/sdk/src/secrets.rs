//! Secrets: a registry of named values (static or looked up over HTTP), exported to the
//! commands that name them and masked as `<secret-hidden>` everywhere else.

use std::sync::Arc;

use aho_corasick::AhoCorasick;

/// What replaces a secret value.
pub const SECRET_MASK: &str = "<secret-hidden>";

/// Replaces every occurrence of known secret values. Cheap to clone.
#[derive(Clone, Default)]
pub struct Masker {
    matcher: Option<Arc<AhoCorasick>>,
}

impl std::fmt::Debug for Masker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Masker")
    }
}

impl Masker {
    /// A masker for these values (empty values are ignored).
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut values: Vec<String> = values
            .into_iter()
            .map(|v| v.as_ref().to_owned())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Self::default();
        }
        // Longest first so that a secret containing another is masked whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let matcher = AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&values)
            .ok()
            .map(Arc::new);
        Self { matcher }
    }

    /// Whether there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// `text` with every secret value replaced.
    pub fn mask(&self, text: &str) -> String {
        match &self.matcher {
            Some(m) => m.replace_all(text, &vec![SECRET_MASK; m.patterns_len()]),
            None => text.to_owned(),
        }
    }

    /// Whether `text` contains a secret value.
    pub fn contains_secret(&self, text: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(text))
    }

    /// Masks every string inside a JSON value, in place.
    pub fn mask_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(s) => {
                if self.contains_secret(s) {
                    *s = self.mask(s);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.mask_json(v)),
            _ => {}
        }
    }
}
