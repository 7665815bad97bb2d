//! Request extractors that fail the way FastAPI does: a body or query that does not fit the
//! schema answers 422 with `loc` naming the field; a body over the limit answers 413.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tandem_protocol::ValidationErrorItem;

use crate::error::ApiError;

/// A JSON body of type `T`.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = body_bytes(req, state).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// The body's bytes, 413 when over the route's limit.
pub async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    match Bytes::from_request(req, state).await {
        Ok(b) => Ok(b),
        Err(e) if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => Err(
            ApiError::TooLarge("The request body is larger than this server accepts.".into()),
        ),
        Err(e) => Err(ApiError::BadRequest(e.body_text())),
    }
}

/// Parses `bytes` as `T`, naming the offending field on failure.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::Validation(vec![ValidationErrorItem {
            kind: "json_invalid".into(),
            loc: vec![Value::from("body"), Value::from(e.column())],
            msg: format!("JSON decode error: {e}"),
            input: Value::Object(Default::default()),
        }])
    })?;
    from_value_at(value, &["body"])
}

/// Deserialises `value` as `T`; errors are 422s located under `prefix`.
pub fn from_value_at<T: DeserializeOwned>(value: Value, prefix: &[&str]) -> Result<T, ApiError> {
    let original = value.clone();
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let mut loc: Vec<Value> = prefix.iter().map(|s| Value::from(*s)).collect();
        for seg in e.path().iter() {
            match seg {
                serde_path_to_error::Segment::Seq { index } => loc.push(Value::from(*index)),
                serde_path_to_error::Segment::Map { key } => loc.push(Value::from(key.as_str())),
                serde_path_to_error::Segment::Enum { variant } => {
                    loc.push(Value::from(variant.as_str()))
                }
                serde_path_to_error::Segment::Unknown => {}
            }
        }
        let msg = e.inner().to_string();
        let (kind, input) = match missing_field(&msg) {
            Some(field) => {
                let input = lookup(&original, &loc[prefix.len()..]);
                loc.push(Value::from(field));
                ("missing", input)
            }
            None => ("value_error", lookup(&original, &loc[prefix.len()..])),
        };
        ApiError::Validation(vec![ValidationErrorItem {
            kind: kind.into(),
            loc,
            msg: if kind == "missing" {
                "Field required".into()
            } else {
                msg
            },
            input,
        }])
    })
}

fn missing_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_owned())
}

fn lookup(value: &Value, path: &[Value]) -> Value {
    let mut cur = value;
    for p in path {
        let next = match p {
            Value::String(k) => cur.get(k.as_str()),
            Value::Number(n) => n.as_u64().and_then(|i| cur.get(i as usize)),
            _ => None,
        };
        match next {
            Some(v) => cur = v,
            None => return Value::Null,
        }
    }
    cur.clone()
}

/// The query string as name → values (names may repeat: `ids=a&ids=b`).
#[derive(Debug, Default, Clone)]
pub struct QueryMap(pub BTreeMap<String, Vec<String>>);

impl<S: Send + Sync> FromRequestParts<S> for QueryMap {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::parse(parts.uri.query().unwrap_or("")))
    }
}

impl QueryMap {
    /// Parses a raw query string.
    pub fn parse(query: &str) -> Self {
        let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.entry(decode(k)).or_default().push(decode(v));
        }
        Self(map)
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0.get(name).cloned().unwrap_or_default()
    }

    /// An integer in `min..=max`, `default` when absent; 422 naming it otherwise.
    pub fn int(&self, name: &str, default: i64, min: i64, max: i64) -> Result<i64, ApiError> {
        let Some(raw) = self.get(name) else {
            return Ok(default);
        };
        let bad =
            |msg: String| ApiError::field(&["query", name], "int_parsing", msg, Value::from(raw));
        let n: i64 = raw
            .trim()
            .parse()
            .map_err(|_| bad("Input should be a valid integer".into()))?;
        if n < min || n > max {
            return Err(bad(format!("Input should be between {min} and {max}")));
        }
        Ok(n)
    }

    /// A boolean (`true`/`false`/`1`/`0`), `default` when absent.
    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.get(name).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(other) => Err(ApiError::field(
                &["query", name],
                "bool_parsing",
                "Input should be a valid boolean",
                Value::from(other),
            )),
        }
    }

    /// One of `allowed`, `default` when absent.
    pub fn choice<'a>(
        &self,
        name: &str,
        default: &'a str,
        allowed: &[&'a str],
    ) -> Result<&'a str, ApiError> {
        let Some(raw) = self.get(name) else {
            return Ok(default);
        };
        allowed
            .iter()
            .find(|a| a.eq_ignore_ascii_case(raw))
            .copied()
            .ok_or_else(|| {
                ApiError::field(
                    &["query", name],
                    "enum",
                    format!("Input should be one of {}", allowed.join(", ")),
                    Value::from(raw),
                )
            })
    }
}

fn decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A conversation id from the path: dashed UUID or 32 hex; 422 `uuid_parsing` otherwise.
pub fn conversation_id(raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|u| u.hyphenated().to_string())
        .map_err(|e| {
            ApiError::field(
                &["path", "conversation_id"],
                "uuid_parsing",
                format!("Input should be a valid UUID, {e}"),
                Value::from(raw),
            )
        })
}

/// A page of `items` starting at `page_id` (the first item's id); `next_page_id` is the id of
/// the item after the page.
pub fn page<T>(
    items: Vec<T>,
    page_id: Option<&str>,
    limit: usize,
    id: impl Fn(&T) -> &str,
) -> (Vec<T>, Option<String>) {
    let start = page_id
        .and_then(|p| items.iter().position(|e| id(e) == p))
        .unwrap_or(0);
    let mut rest: Vec<T> = items.into_iter().skip(start).collect();
    let next = rest.get(limit).map(|e| id(e).to_owned());
    rest.truncate(limit);
    (rest, next)
}
