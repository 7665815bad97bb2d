//! Secrets: a registry of named values (static or looked up over HTTP), exported to the
//! commands that name them and masked as `<secret-hidden>` everywhere else.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use aho_corasick::AhoCorasick;
use serde_json::Value;

/// What replaces a secret value.
pub const SECRET_MASK: &str = "<secret-hidden>";

/// Replaces every occurrence of known secret values. Cheap to clone.
#[derive(Clone, Default)]
pub struct Masker {
    matcher: Option<Arc<AhoCorasick>>,
    /// The longest value's length in bytes.
    longest: usize,
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
        let longest = values.first().map_or(0, String::len);
        let matcher = AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&values)
            .ok()
            .map(Arc::new);
        Self { matcher, longest }
    }

    /// The length in bytes of the longest value masked (0 for none): how much of a stream to
    /// hold back so a value split across chunks is still caught.
    pub fn longest(&self) -> usize {
        self.longest
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

    /// Masks the text parts of message content, in place.
    pub fn mask_content(&self, content: &mut [tandem_protocol::Content]) {
        if self.is_empty() {
            return;
        }
        for c in content {
            if let tandem_protocol::Content::Text(t) = c
                && self.contains_secret(&t.text)
            {
                t.text = self.mask(&t.text);
            }
        }
    }

    /// Masks every string inside a JSON value, in place.
    pub fn mask_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(s) if self.contains_secret(s) => *s = self.mask(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.mask_json(v)),
            _ => {}
        }
    }
}

/// Where a secret's value comes from.
#[derive(Clone, PartialEq)]
pub enum SecretSource {
    /// A value given directly.
    Static {
        /// The value.
        value: String,
        /// What it is for.
        description: Option<String>,
    },
    /// A value fetched with an HTTP GET when a command first needs it.
    Lookup {
        /// Where to GET it (the response body is the value).
        url: String,
        /// Headers to send.
        headers: BTreeMap<String, String>,
        /// What it is for.
        description: Option<String>,
    },
}

impl std::fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Static { .. } => f.write_str("Static(<secret-hidden>)"),
            Self::Lookup { url, .. } => f
                .debug_struct("Lookup")
                .field("url", url)
                .finish_non_exhaustive(),
        }
    }
}

impl SecretSource {
    /// Reads upstream's shapes: a bare string, `{"kind":"StaticSecret","value":…}` or
    /// `{"kind":"LookupSecret","url":…,"headers":{…}}`.
    pub fn from_json(value: &Value) -> Result<Self, SecretError> {
        let description = || {
            value
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        match value {
            Value::String(s) => Ok(Self::Static {
                value: s.clone(),
                description: None,
            }),
            Value::Object(obj) => match obj.get("kind").and_then(Value::as_str) {
                Some("LookupSecret") => {
                    let url = obj
                        .get("url")
                        .and_then(Value::as_str)
                        .ok_or(SecretError::NoUrl)?
                        .to_owned();
                    let headers = match obj.get("headers") {
                        None | Some(Value::Null) => BTreeMap::new(),
                        Some(h) => {
                            serde_json::from_value(h.clone()).map_err(SecretError::Headers)?
                        }
                    };
                    Ok(Self::Lookup {
                        url,
                        headers,
                        description: description(),
                    })
                }
                Some("StaticSecret") | None => {
                    let v = obj
                        .get("value")
                        .and_then(Value::as_str)
                        .ok_or(SecretError::NoValue)?;
                    Ok(Self::Static {
                        value: v.to_owned(),
                        description: description(),
                    })
                }
                Some(other) => Err(SecretError::UnknownKind(other.to_owned())),
            },
            _ => Err(SecretError::NotASecret),
        }
    }

    /// Upstream's shape with the value, as its `secrets` maps hold it and
    /// [`from_json`](Self::from_json) reads it: a static value without a description as a bare
    /// string, else a `StaticSecret` / `LookupSecret` object. Only for handing the secret to an
    /// agent server; what is stored or shown is [`redacted_json`](Self::redacted_json).
    pub fn into_json(self) -> Value {
        match self {
            Self::Static {
                value,
                description: None,
            } => Value::String(value),
            Self::Static {
                value,
                description: Some(d),
            } => serde_json::json!({"kind": "StaticSecret", "value": value, "description": d}),
            Self::Lookup {
                url,
                headers,
                description,
            } => {
                let mut o =
                    serde_json::json!({"kind": "LookupSecret", "url": url, "headers": headers});
                if let Some(d) = description {
                    o["description"] = Value::String(d);
                }
                o
            }
        }
    }

    /// The redacted form written to disk and sent to clients: never the value.
    pub fn redacted_json(&self) -> Value {
        match self {
            Self::Static { description, .. } => {
                let mut o = serde_json::json!({"kind": "StaticSecret", "value": "**********"});
                if let Some(d) = description {
                    o["description"] = Value::String(d.clone());
                }
                o
            }
            Self::Lookup {
                url,
                headers,
                description,
            } => {
                let masked: BTreeMap<&String, &str> =
                    headers.keys().map(|k| (k, "**********")).collect();
                let mut o =
                    serde_json::json!({"kind": "LookupSecret", "url": url, "headers": masked});
                if let Some(d) = description {
                    o["description"] = Value::String(d.clone());
                }
                o
            }
        }
    }
}

/// The secrets of one conversation. Values are exported only to commands that name them and
/// masked in everything else the engine writes or sends.
#[derive(Debug, Clone, Default)]
pub struct SecretRegistry {
    sources: BTreeMap<String, SecretSource>,
    /// Values fetched from lookup sources.
    looked_up: BTreeMap<String, String>,
    /// Values replaced by an update: still masked, since they were secret once.
    retired: Vec<String>,
    masker: Masker,
}

impl SecretRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces secrets (mid-conversation updates included).
    pub fn update(&mut self, secrets: impl IntoIterator<Item = (String, SecretSource)>) {
        for (name, source) in secrets {
            if let Some(old) = self.looked_up.remove(&name) {
                self.retired.push(old);
            }
            if let Some(SecretSource::Static { value, .. }) = self.sources.insert(name, source) {
                self.retired.push(value);
            }
        }
        self.rebuild_masker();
    }

    /// Parses upstream's `{"NAME": value-or-source, ...}` map.
    pub fn parse_map(value: &Value) -> Result<Vec<(String, SecretSource)>, SecretMapError> {
        let obj = value.as_object().ok_or(SecretMapError::NotAnObject)?;
        obj.iter()
            .map(|(name, v)| {
                if !is_valid_name(name) {
                    return Err(SecretMapError::BadName(name.clone()));
                }
                SecretSource::from_json(v)
                    .map(|s| (name.clone(), s))
                    .map_err(|problem| SecretMapError::Secret {
                        name: name.clone(),
                        problem,
                    })
            })
            .collect()
    }

    /// Secret names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sources.keys().map(String::as_str)
    }

    /// Whether there are no secrets.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The masker for every known value.
    pub fn masker(&self) -> Masker {
        self.masker.clone()
    }

    /// The names a command mentions (as a whole word, e.g. `$API_TOKEN` or `${API_TOKEN}`).
    pub fn names_in<'a>(&'a self, command: &str) -> Vec<&'a str> {
        self.sources
            .keys()
            .filter(|name| mentions(command, name))
            .map(String::as_str)
            .collect()
    }

    /// Resolves the values of the secrets `command` names, looking up remote ones (once) with
    /// `client`. A lookup that fails is left out and reported in the error list.
    pub async fn env_for(
        &mut self,
        command: &str,
        client: &reqwest::Client,
    ) -> (HashMap<String, String>, Vec<String>) {
        let names: Vec<String> = self
            .names_in(command)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut env = HashMap::new();
        let mut errors = Vec::new();
        let mut fetched = false;
        for name in names {
            match self.sources.get(&name) {
                Some(SecretSource::Static { value, .. }) => {
                    env.insert(name, value.clone());
                }
                Some(SecretSource::Lookup { url, headers, .. }) => {
                    if let Some(v) = self.looked_up.get(&name) {
                        env.insert(name, v.clone());
                        continue;
                    }
                    match lookup(client, url, headers).await {
                        Ok(v) => {
                            self.looked_up.insert(name.clone(), v.clone());
                            env.insert(name, v);
                            fetched = true;
                        }
                        Err(e) => errors.push(format!("secret `{name}`: lookup failed: {e}")),
                    }
                }
                None => {}
            }
        }
        if fetched {
            self.rebuild_masker();
        }
        (env, errors)
    }

    /// The registry as persisted and shown: `{"secret_sources": {NAME: redacted source}}`.
    pub fn redacted_json(&self) -> Value {
        let sources: serde_json::Map<String, Value> = self
            .sources
            .iter()
            .map(|(k, v)| (k.clone(), v.redacted_json()))
            .collect();
        serde_json::json!({ "secret_sources": sources })
    }

    /// A masker for these secrets and the `extra` values (the host's credentials).
    pub fn masker_with(&self, extra: &[String]) -> Masker {
        if extra.is_empty() {
            return self.masker.clone();
        }
        Masker::new(self.values().chain(extra.iter().map(String::as_str)))
    }

    /// Every value masked: current ones, fetched ones and retired ones.
    fn values(&self) -> impl Iterator<Item = &str> {
        let statics = self.sources.values().filter_map(|s| match s {
            SecretSource::Static { value, .. } => Some(value.as_str()),
            SecretSource::Lookup { .. } => None,
        });
        let fetched = self.looked_up.values().map(String::as_str);
        let retired = self.retired.iter().map(String::as_str);
        statics.chain(fetched).chain(retired)
    }

    fn rebuild_masker(&mut self) {
        self.masker = Masker::new(self.values());
    }
}

fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why a secret's JSON cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// A `LookupSecret` without a string `url`.
    #[error("LookupSecret needs a string `url`")]
    NoUrl,
    /// A `LookupSecret`'s `headers` are not a map of strings.
    #[error("LookupSecret `headers`: {0}")]
    Headers(serde_json::Error),
    /// A `StaticSecret` without a string `value`.
    #[error("StaticSecret needs a string `value`")]
    NoValue,
    /// A `kind` upstream does not have.
    #[error("unknown secret kind `{0}`")]
    UnknownKind(String),
    /// Neither a string nor an object.
    #[error("a secret must be a string or an object with `kind`")]
    NotASecret,
}

/// Why a `{"NAME": secret, ...}` map cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretMapError {
    /// The map is not a JSON object.
    #[error("secrets must be a JSON object of NAME → value")]
    NotAnObject,
    /// A name cannot be an environment variable.
    #[error("secret name `{0}` is not a valid environment variable name")]
    BadName(String),
    /// A secret cannot be read.
    #[error("secret `{name}`: {problem}")]
    Secret {
        /// Its name.
        name: String,
        /// What is wrong with it.
        problem: SecretError,
    },
}

/// Why a `LookupSecret`'s value could not be fetched.
#[derive(Debug, thiserror::Error)]
enum LookupError {
    /// The request failed (its text without the URL, which may carry a token).
    #[error(transparent)]
    Request(#[from] reqwest::Error),
    /// The server answered with an error status.
    #[error("HTTP {0}")]
    Status(reqwest::StatusCode),
}

fn mentions(command: &str, name: &str) -> bool {
    let bytes = command.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    command.match_indices(name).any(|(i, _)| {
        let before_ok = i == 0 || !is_word(bytes[i - 1]);
        let end = i + name.len();
        let after_ok = end >= bytes.len() || !is_word(bytes[end]);
        before_ok && after_ok
    })
}

async fn lookup(
    client: &reqwest::Client,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<String, LookupError> {
    let mut req = client.get(url).timeout(std::time::Duration::from_secs(30));
    for (k, v) in headers {
        req = req.header(k, v);
    }
    // Without the URL: it may carry a token.
    let resp = req.send().await.map_err(|e| e.without_url())?;
    let status = resp.status();
    if !status.is_success() {
        return Err(LookupError::Status(status));
    }
    let text = resp.text().await.map_err(|e| e.without_url())?;
    Ok(text.trim_end_matches(['\r', '\n']).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_every_occurrence_longest_first() {
        let m = Masker::new(["abc", "abcdef", ""]);
        assert_eq!(
            m.mask("x abcdef y abc"),
            "x <secret-hidden> y <secret-hidden>"
        );
        assert!(!m.contains_secret("ab"));
    }

    #[test]
    fn masks_json_strings_in_place() {
        let m = Masker::new(["s3cr3t"]);
        let mut v = serde_json::json!({"a": ["s3cr3t!", {"b": "no"}], "n": 1});
        m.mask_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["<secret-hidden>!", {"b": "no"}], "n": 1})
        );
    }

    #[test]
    fn parses_upstream_shapes_and_redacts() {
        let parsed = SecretRegistry::parse_map(&serde_json::json!({
            "TOKEN": "v1",
            "OTHER": {"kind": "StaticSecret", "value": "v2", "description": "d"},
            "REMOTE": {"kind": "LookupSecret", "url": "http://127.0.0.1:1/x", "headers": {"Authorization": "Bearer z"}}
        }))
        .unwrap();
        let mut reg = SecretRegistry::new();
        reg.update(parsed);
        assert_eq!(
            reg.names().collect::<Vec<_>>(),
            ["OTHER", "REMOTE", "TOKEN"]
        );
        let red = reg.redacted_json().to_string();
        assert!(
            !red.contains("v1") && !red.contains("v2") && !red.contains("Bearer z"),
            "{red}"
        );
        assert_eq!(
            reg.masker().mask("v1 v2"),
            "<secret-hidden> <secret-hidden>"
        );
    }

    #[test]
    fn writes_upstream_shapes_that_read_back_the_same() {
        let sources = [
            (
                SecretSource::Static {
                    value: "v1".into(),
                    description: None,
                },
                serde_json::json!("v1"),
            ),
            (
                SecretSource::Static {
                    value: "v2".into(),
                    description: Some("d".into()),
                },
                serde_json::json!({"kind": "StaticSecret", "value": "v2", "description": "d"}),
            ),
            (
                SecretSource::Lookup {
                    url: "http://127.0.0.1:1/x".into(),
                    headers: [("Authorization".to_owned(), "Bearer z".to_owned())].into(),
                    description: None,
                },
                serde_json::json!({"kind": "LookupSecret", "url": "http://127.0.0.1:1/x",
                                   "headers": {"Authorization": "Bearer z"}}),
            ),
        ];
        for (source, want) in sources {
            let json = source.clone().into_json();
            assert_eq!(json, want);
            assert_eq!(SecretSource::from_json(&json).unwrap(), source);
        }
    }

    #[test]
    fn rejects_bad_names_and_shapes() {
        assert!(SecretRegistry::parse_map(&serde_json::json!({"1BAD": "x"})).is_err());
        assert!(SecretRegistry::parse_map(&serde_json::json!({"OK": 3})).is_err());
        assert!(
            SecretRegistry::parse_map(&serde_json::json!({"OK": {"kind": "LookupSecret"}}))
                .is_err()
        );
    }

    #[test]
    fn finds_names_as_whole_words() {
        let mut reg = SecretRegistry::new();
        reg.update([(
            "API_KEY".to_owned(),
            SecretSource::Static {
                value: "k".into(),
                description: None,
            },
        )]);
        assert_eq!(reg.names_in("curl -H \"x: $API_KEY\""), ["API_KEY"]);
        assert_eq!(reg.names_in("echo ${API_KEY}"), ["API_KEY"]);
        assert!(reg.names_in("echo $API_KEY_2 MY_API_KEY").is_empty());
    }

    #[tokio::test]
    async fn static_values_become_env_and_updates_apply() {
        let mut reg = SecretRegistry::new();
        reg.update([(
            "T".to_owned(),
            SecretSource::Static {
                value: "one".into(),
                description: None,
            },
        )]);
        let client = reqwest::Client::new();
        let (env, errs) = reg.env_for("echo $T", &client).await;
        assert_eq!(env.get("T").map(String::as_str), Some("one"));
        assert!(errs.is_empty());
        reg.update([(
            "T".to_owned(),
            SecretSource::Static {
                value: "two".into(),
                description: None,
            },
        )]);
        let (env, _) = reg.env_for("echo $T", &client).await;
        assert_eq!(env.get("T").map(String::as_str), Some("two"));
        assert_eq!(
            reg.masker().mask("one two"),
            "<secret-hidden> <secret-hidden>"
        );
    }
}
