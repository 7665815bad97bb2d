//! Turns a failed HTTP exchange into an [`LlmError`]: the status picks the class, the body gives
//! the message (OpenAI's `{"error":{"message"}}`, or a short snippet of an HTML or plain page),
//! and `retry-after` / `retry-after-ms` give the wait.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::LlmError;

/// Longest message kept from a body that is not an OpenAI error object.
const SNIPPET_CHARS: usize = 200;

/// The error for a non-success `status` with this `body`; `timeout` is the configured request
/// timeout (reported for 408).
pub(crate) fn status_error(
    status: u16,
    headers: &HeaderMap,
    body: &str,
    timeout: Duration,
) -> LlmError {
    let message = body_message(status, body);
    classify(status, message, retry_after(headers), timeout)
}

/// The error for a status and message (also used for error objects inside 200 replies and SSE
/// streams).
pub(crate) fn classify(
    status: u16,
    message: String,
    retry_after: Option<Duration>,
    timeout: Duration,
) -> LlmError {
    match status {
        401 | 403 => LlmError::Auth { status, message },
        429 => LlmError::RateLimited {
            retry_after,
            message,
        },
        408 => LlmError::Timeout(timeout),
        _ if is_context_window_message(&message) && status < 500 => {
            LlmError::ContextWindowExceeded(message)
        }
        500.. => LlmError::ServiceUnavailable { status, message },
        _ => LlmError::BadRequest { status, message },
    }
}

/// Whether a provider message says the prompt is longer than the model accepts (the phrasings of
/// OpenAI, Anthropic via proxies, vLLM, Ollama, DeepSeek and OpenRouter).
pub(crate) fn is_context_window_message(message: &str) -> bool {
    const PATTERNS: [&str; 12] = [
        "context_length_exceeded",
        "context length",
        "context window",
        "maximum context",
        "context_window",
        "prompt is too long",
        "input is too long",
        "too many tokens",
        "exceeds the context",
        "token limit",
        "input length and `max_tokens` exceed",
        "reduce the length of the messages",
    ];
    let lower = message.to_lowercase();
    PATTERNS.iter().any(|p| lower.contains(p))
}

/// The human message in an error body.
pub(crate) fn body_message(status: u16, body: &str) -> String {
    let trimmed = body.trim();
    if let Ok(json) = serde_json::from_str::<Value>(trimmed)
        && let Some(message) = json_message(&json)
    {
        return message;
    }
    if trimmed.is_empty() {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("error");
        return format!("HTTP {status} {reason} (empty body)");
    }
    if looks_like_html(trimmed) {
        let text = html_title(trimmed).unwrap_or_else(|| strip_tags(trimmed));
        return format!("HTML error page: {}", snippet(&text));
    }
    snippet(trimmed)
}

/// The message of an OpenAI-style error object, or of the other shapes servers use
/// (`{"error": "..."}`, `{"message": ...}`, `{"detail": ...}`).
pub(crate) fn json_message(json: &Value) -> Option<String> {
    let error = json.get("error");
    let candidates = [
        error.and_then(|e| e.get("message")),
        error.filter(|e| e.is_string()),
        json.get("message"),
        json.get("detail"),
    ];
    let found = candidates.into_iter().flatten().next()?;
    Some(match found {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// The numeric `code` of an error object (OpenRouter puts the HTTP status there).
pub(crate) fn json_code(json: &Value) -> Option<u16> {
    let code = json.get("error")?.get("code")?;
    code.as_u64()
        .or_else(|| code.as_str().and_then(|s| s.parse().ok()))
        .and_then(|c| u16::try_from(c).ok())
}

/// The wait asked for by `retry-after-ms`, or `retry-after` in seconds or as an HTTP-date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::try_from_secs_f64(secs).ok())
            .flatten();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

fn looks_like_html(body: &str) -> bool {
    let head: String = body.chars().take(100).collect::<String>().to_lowercase();
    head.starts_with('<')
        && (head.contains("<html")
            || head.contains("<!doctype")
            || head.contains("<head")
            || head.contains("<body")
            || head.contains("<title"))
}

fn html_title(html: &str) -> Option<String> {
    let lower = html.to_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let title = html.get(open_end..close)?.trim();
    (!title.is_empty()).then(|| title.to_owned())
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whitespace collapsed, at most [`SNIPPET_CHARS`] characters.
fn snippet(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SNIPPET_CHARS {
        return line;
    }
    let mut short: String = line.chars().take(SNIPPET_CHARS).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    const T: Duration = Duration::from_secs(30);

    #[test]
    fn statuses_map_to_classes() {
        let e = |status, body: &str| status_error(status, &HeaderMap::new(), body, T);
        assert!(matches!(e(401, ""), LlmError::Auth { status: 401, .. }));
        assert!(matches!(e(403, ""), LlmError::Auth { status: 403, .. }));
        assert!(matches!(
            e(429, ""),
            LlmError::RateLimited {
                retry_after: None,
                ..
            }
        ));
        assert!(matches!(
            e(503, ""),
            LlmError::ServiceUnavailable { status: 503, .. }
        ));
        assert!(matches!(
            e(404, "{}"),
            LlmError::BadRequest { status: 404, .. }
        ));
        assert_eq!(e(408, ""), LlmError::Timeout(T));
        let body = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
        assert_eq!(
            e(400, body),
            LlmError::ContextWindowExceeded(
                "This model's maximum context length is 8192 tokens".into()
            )
        );
        assert!(matches!(
            e(413, "Prompt is too long"),
            LlmError::ContextWindowExceeded(_)
        ));
        assert_eq!(
            e(400, r#"{"error":{"message":"bad tool"}}"#),
            LlmError::BadRequest {
                status: 400,
                message: "bad tool".into()
            }
        );
    }

    #[test]
    fn messages_from_odd_bodies() {
        assert_eq!(body_message(500, r#"{"error":"boom"}"#), "boom");
        assert_eq!(
            body_message(422, r#"{"detail":[{"msg":"x"}]}"#),
            r#"[{"msg":"x"}]"#
        );
        assert_eq!(body_message(502, ""), "HTTP 502 Bad Gateway (empty body)");
        assert_eq!(
            body_message(
                502,
                "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
            ),
            "HTML error page: 502 Bad Gateway"
        );
        assert_eq!(
            body_message(
                503,
                "<html><body><h1>Down</h1>  for  maintenance</body></html>"
            ),
            "HTML error page: Down for maintenance"
        );
        assert_eq!(
            body_message(500, &"x".repeat(500)).chars().count(),
            SNIPPET_CHARS + 1
        );
    }

    #[test]
    fn retry_after_forms() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after", HeaderValue::from_static("0.5"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(500)));
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(100));
        headers.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        let wait = retry_after(&headers).unwrap();
        assert!(
            wait > Duration::from_secs(90) && wait <= Duration::from_secs(100),
            "{wait:?}"
        );
        headers.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
    }
}
