//! The HTTP exchange every protocol client shares: one POST with the client's
//! headers under the configured timeout, non-success statuses mapped to [`LlmError`] (message
//! from the body, `retry-after` honoured), and an SSE reader that hands each event to the
//! protocol's assembler with an idle timeout per event.

use std::time::{Duration, Instant};

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tandem_protocol::LlmConfig;

use crate::error::{LlmError, Result};
use crate::openai::http_error;

/// The request timeout when the configuration has none (or an unusable one).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest wait for a TCP/TLS connection, whatever the request timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A reply whose status was a success.
pub(crate) enum Body {
    /// A JSON (or other non-SSE) body, read whole.
    Whole(Bytes),
    /// An SSE stream still to be read.
    Stream(reqwest::Response),
}

/// One endpoint with its headers and timeout.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    pub endpoint: Url,
    headers: HeaderMap,
    pub timeout: Duration,
}

impl Transport {
    /// A transport posting to `endpoint` with `headers` plus the configuration's
    /// `extra_headers`, under its `timeout`.
    pub fn new(endpoint: &str, mut headers: HeaderMap, config: &LlmConfig) -> Result<Self> {
        let url = Url::parse(endpoint)
            .map_err(|e| LlmError::Config(format!("bad base_url for `{endpoint}`: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "base_url of `{endpoint}` is not http(s)"
            )));
        }
        for (name, value) in config.extra_headers.iter().flatten() {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LlmError::Config(format!("bad extra header name `{name}`")))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| LlmError::Config(format!("bad value for extra header `{name}`")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let timeout = timeout_of(config);
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            client,
            endpoint: url,
            headers,
            timeout,
        })
    }

    /// Posts `body`; a non-success status becomes its [`LlmError`], a success its body (read
    /// whole unless it is an event stream).
    pub async fn post(&self, body: Bytes, started: Instant) -> Result<Body> {
        let send = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send();
        let response = tokio::time::timeout(self.timeout, send)
            .await
            .map_err(|_| LlmError::Timeout(self.timeout))?
            .map_err(|e| {
                unreachable(&e, &self.endpoint).unwrap_or_else(|| transport_error(&e, self.timeout))
            })?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            // The status says what happened; an unreadable body only loses the message.
            let body = match tokio::time::timeout(self.timeout, response.bytes()).await {
                Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                _ => String::new(),
            };
            return Err(http_error::status_error(
                status.as_u16(),
                &headers,
                &body,
                self.timeout,
            ));
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        if is_sse {
            return Ok(Body::Stream(response));
        }
        let left = self.timeout.saturating_sub(started.elapsed());
        let bytes = tokio::time::timeout(left, response.bytes())
            .await
            .map_err(|_| LlmError::Timeout(self.timeout))?
            .map_err(|e| transport_error(&e, self.timeout))?;
        Ok(Body::Whole(bytes))
    }
}

/// The configured request timeout, or the default.
pub(crate) fn timeout_of(config: &LlmConfig) -> Duration {
    config
        .timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// The error for a failure below HTTP (connect, reset, timeout, undecodable body).
pub(crate) fn transport_error(error: &reqwest::Error, timeout: Duration) -> LlmError {
    if error.is_timeout() {
        return LlmError::Timeout(timeout);
    }
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    if error.is_decode() {
        LlmError::MalformedResponse(message)
    } else if error.is_builder() {
        LlmError::Config(message)
    } else {
        LlmError::Connection(message)
    }
}

/// The error for a request that cannot reach the server however often it is tried: the host
/// name does not resolve, a loopback port refuses the connection (nothing listens there), the
/// server's TLS certificate is refused, or the server does not speak TLS. `None` for the
/// failures worth another try (timeouts, resets, a remote host refusing while it restarts).
pub(crate) fn unreachable(error: &reqwest::Error, url: &Url) -> Option<LlmError> {
    if error.is_timeout() {
        return None;
    }
    let mut refused = false;
    let mut chain = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        chain.push_str(&cause.to_string().to_lowercase());
        chain.push('\n');
        source = cause.source();
    }
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or_default();
    let reason = if chain.contains("dns error")
        || chain.contains("failed to lookup address")
        || chain.contains("name or service not known")
    {
        format!("the host name `{host}` does not resolve")
    } else if refused && is_loopback(url) {
        format!("nothing listens on {host}:{port} (connection refused)")
    } else if chain.contains("certificate") {
        format!(
            "the TLS certificate of `{host}` is not trusted ({})",
            last_line(&chain)
        )
    } else if chain.contains("corrupt message") || chain.contains("wrong version number") {
        format!("`{host}:{port}` does not speak TLS (should base_url start with http://?)")
    } else {
        return None;
    };
    let mut shown = url.clone();
    // A key in the URL's user info never reaches a message.
    let _ = shown.set_password(None);
    let _ = shown.set_username("");
    Some(LlmError::Unreachable {
        url: shown.to_string(),
        reason,
    })
}

/// Whether `url` names this machine (`127.0.0.0/8`, `::1`, `localhost`).
fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

/// The innermost cause in a lowercased error chain.
fn last_line(chain: &str) -> &str {
    chain.trim_end().rsplit('\n').next().unwrap_or_default()
}

/// What an assembler says after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    More,
    /// The reply is complete; stop reading.
    Done,
}

/// Reads an SSE stream, giving `on_event` each event's name (empty when none) and data;
/// `idle` bounds the wait for each event.
pub(crate) async fn read_events(
    response: reqwest::Response,
    idle: Duration,
    mut on_event: impl FnMut(&str, &str) -> Result<Flow>,
) -> Result<()> {
    let mut events = response.bytes_stream().eventsource();
    loop {
        let next = tokio::time::timeout(idle, events.next())
            .await
            .map_err(|_| LlmError::Timeout(idle))?;
        let event = match next {
            None => return Ok(()),
            Some(Ok(event)) => event,
            Some(Err(EventStreamError::Transport(e))) => return Err(transport_error(&e, idle)),
            Some(Err(EventStreamError::Utf8(e))) => {
                return Err(LlmError::MalformedResponse(format!(
                    "stream is not UTF-8: {e}"
                )));
            }
            Some(Err(EventStreamError::Parser(e))) => {
                return Err(LlmError::MalformedResponse(format!(
                    "stream is not SSE: {e}"
                )));
            }
        };
        if on_event(&event.event, &event.data)? == Flow::Done {
            return Ok(());
        }
    }
}

/// Feeds a whole SSE body (already in memory) to `on_event`, as [`read_events`] does for a
/// live stream: for recorded traffic and benchmarks.
pub(crate) fn replay_events(
    body: &str,
    mut on_event: impl FnMut(&str, &str) -> Result<Flow>,
) -> Result<()> {
    let mut name = String::new();
    let mut data = String::new();
    let mut has_data = false;
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if has_data && on_event(&name, &data)? == Flow::Done {
                return Ok(());
            }
            name.clear();
            data.clear();
            has_data = false;
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut name),
            "data" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    if has_data {
        on_event(&name, &data)?;
    }
    Ok(())
}

/// The error for an error object found in a 200 reply or a stream (`{"type": "...",
/// "message": "..."}` or wrapped in `error`); the kind picks the class when no status is known.
pub(crate) fn error_object(error: &serde_json::Value, timeout: Duration) -> LlmError {
    let inner = error.get("error").unwrap_or(error);
    let message = inner
        .get("message")
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| inner.to_string(), str::to_owned);
    // `type` is the class in Anthropic's errors but just `error` in Responses stream events.
    let kind = ["type", "code"]
        .into_iter()
        .filter_map(|key| inner.get(key).and_then(serde_json::Value::as_str))
        .find(|kind| *kind != "error")
        .unwrap_or_default();
    let status = match kind {
        "overloaded_error" => 529,
        "rate_limit_error" | "rate_limit_exceeded" => 429,
        "authentication_error" | "permission_error" | "invalid_api_key" => 401,
        "invalid_request_error" | "context_length_exceeded" | "not_found_error" => 400,
        "request_too_large" => 413,
        "timeout_error" => 408,
        _ => inner
            .get("code")
            .and_then(serde_json::Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (400..600).contains(c))
            .unwrap_or(500),
    };
    http_error::classify(status, message, None, timeout)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn replays_sse_text() {
        let mut seen = Vec::new();
        replay_events(
            "event: a\ndata: 1\r\n\r\n: comment\n\ndata: x\ndata: y\n\nevent: b\ndata:z",
            |name, data| {
                seen.push((name.to_owned(), data.to_owned()));
                Ok(Flow::More)
            },
        )
        .unwrap();
        assert_eq!(
            seen,
            vec![
                ("a".into(), "1".into()),
                (String::new(), "x\ny".into()),
                ("b".into(), "z".into())
            ]
        );
    }

    #[test]
    fn error_objects_by_kind() {
        let t = Duration::from_secs(1);
        assert!(matches!(
            error_object(
                &json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
                t
            ),
            LlmError::ServiceUnavailable { status: 529, .. }
        ));
        assert!(matches!(
            error_object(
                &json!({"type":"invalid_request_error","message":"prompt is too long: 210000 tokens"}),
                t
            ),
            LlmError::ContextWindowExceeded(_)
        ));
        assert!(matches!(
            error_object(&json!({"code":"rate_limit_exceeded","message":"slow"}), t),
            LlmError::RateLimited { .. }
        ));
        assert!(matches!(
            error_object(&json!({"code":"server_error","message":"x"}), t),
            LlmError::ServiceUnavailable { status: 500, .. }
        ));
    }
}
