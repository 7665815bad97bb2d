//! `meta.json`: the catalog entry of a conversation (upstream `StoredConversation`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tandem_protocol::Extra;

/// The catalog entry of a conversation, as upstream's `meta.json` holds it. Tandem uses the
/// fields named here; every other upstream field (the `StartConversationRequest` fields,
/// `forked_from_*`, ...) is kept in `extra` and written back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationMeta {
    /// Conversation id as 32 lowercase hex digits (the directory name).
    pub id: String,
    /// Title (`null` until one is set or generated).
    #[serde(default)]
    pub title: Option<String>,
    /// When the conversation was created (ISO 8601 UTC with `Z`, microseconds).
    #[serde(with = "iso_utc")]
    pub created_at: DateTime<Utc>,
    /// When it last changed (ISO 8601 UTC with `Z`, microseconds).
    #[serde(with = "iso_utc")]
    pub updated_at: DateTime<Utc>,
    /// Cost and token totals, as upstream's `metrics` (`null` when unknown).
    #[serde(default)]
    pub metrics: Option<serde_json::Value>,
    /// Upstream fields this version does not use, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ConversationMeta {
    /// A fresh entry for conversation `id` (dashed or hex) created at `now`.
    pub fn new(id: &str, title: Option<String>, now: DateTime<Utc>) -> Self {
        Self {
            id: hex_id(id),
            title,
            created_at: now,
            updated_at: now,
            metrics: None,
            extra: Extra::new(),
        }
    }
}

/// `id` without dashes, lowercased.
pub(crate) fn hex_id(id: &str) -> String {
    id.chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// An event's or entry's timestamp (RFC 3339, or a naive time read as UTC, as upstream
/// writes them), if it is one.
pub(crate) fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    iso_utc::parse(text).ok()
}

/// Timestamps the way Python's `datetime.isoformat()` writes them for UTC and upstream then
/// suffixes `Z`: microseconds when non-zero (`2026-11-22T12:38:18.364500Z`), none otherwise.
/// Any RFC 3339 time reads.
mod iso_utc {
    use chrono::{DateTime, Timelike, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        let format = if t.nanosecond() / 1000 == 0 {
            "%Y-%m-%dT%H:%M:%SZ"
        } else {
            "%Y-%m-%dT%H:%M:%S%.6fZ"
        };
        s.collect_str(&t.format(format))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        parse(&text).map_err(|e| serde::de::Error::custom(format!("bad timestamp {text:?}: {e}")))
    }

    /// Upstream writes `Z`; a naive time (no zone) is read as UTC rather than refused.
    pub(super) fn parse(text: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
        DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&Utc))
            .or_else(|_| {
                chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
                    .map(|t| t.and_utc())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_written_like_upstream() {
        let json = r#"{"id":"ab","title":null,"metrics":null,
            "created_at":"2026-11-22T12:38:18.364500Z","updated_at":"2026-11-22T12:38:54Z",
            "worktree":false}"#;
        let meta: ConversationMeta = serde_json::from_str(json).unwrap();
        let back = serde_json::to_value(&meta).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(json).unwrap()
        );
    }

    #[test]
    fn new_takes_dashed_ids() {
        let now = Utc::now();
        let meta = ConversationMeta::new("53B0201B-2388-48c2-8c09-12bd065f719e", None, now);
        assert_eq!(meta.id, "53b0201b238848c28c0912bd065f719e");
    }
}
