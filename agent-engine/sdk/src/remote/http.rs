//! The HTTP side of the agent-server protocol: one client per server, the session key on every
//! request, and server answers mapped to [`RemoteError`]s a person can act on.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{RemoteError, RemoteResult};

/// The header every `/api` request carries.
pub const SESSION_KEY_HEADER: &str = "X-Session-API-Key";

/// An HTTP client bound to one agent server (base URL and session key). Cheap to clone.
#[derive(Clone)]
pub struct ServerClient {
    base: String,
    key: Option<String>,
    http: reqwest::Client,
}

impl std::fmt::Debug for ServerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerClient")
            .field("base", &self.base)
            .field("key", &self.key.as_ref().map(|_| "**********"))
            .finish_non_exhaustive()
    }
}

impl ServerClient {
    /// A client for the server at `url` (`http://host:port`, trailing slash optional) with an
    /// optional session key. Does not contact the server.
    pub fn new(url: &str, key: Option<String>) -> RemoteResult<Self> {
        let base = url.trim().trim_end_matches('/').to_owned();
        let rest = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"))
            .ok_or_else(|| RemoteError::InvalidUrl(url.to_owned()))?;
        if rest.is_empty() || rest.starts_with('/') {
            return Err(RemoteError::InvalidUrl(url.to_owned()));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| RemoteError::Unreachable {
                url: base.clone(),
                detail: e.to_string(),
            })?;
        let key = key.filter(|k| !k.is_empty());
        Ok(Self { base, key, http })
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The session key, if any.
    pub fn session_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// `ws://` / `wss://` URL of `path`.
    pub fn ws_url(&self, path: &str) -> String {
        let base = if let Some(rest) = self.base.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = self.base.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            self.base.clone()
        };
        format!("{base}{path}")
    }

    /// A request to `path` with the session key set.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let req = self.http.request(method, format!("{}{path}", self.base));
        match &self.key {
            Some(k) => req.header(SESSION_KEY_HEADER, k),
            None => req,
        }
    }

    /// Sends `req` and maps transport failures and non-success statuses to errors.
    pub async fn send(
        &self,
        method: &Method,
        path: &str,
        req: RequestBuilder,
    ) -> RemoteResult<Response> {
        let resp = req.send().await.map_err(|e| RemoteError::Unreachable {
            url: self.base.clone(),
            detail: error_chain(&e),
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let body = resp.text().await.unwrap_or_default();
        let detail = detail_of(&body);
        Err(match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => RemoteError::Unauthorized {
                url: self.base.clone(),
            },
            StatusCode::NOT_FOUND => RemoteError::NotFound(format!("{method} {path} ({detail})")),
            StatusCode::CONFLICT => RemoteError::Conflict {
                detail,
                code: code_of(&body),
            },
            _ => RemoteError::Status {
                method: method.to_string(),
                path: path.to_owned(),
                status: status.as_u16(),
                detail,
            },
        })
    }

    /// `GET path?query` → JSON.
    pub async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> RemoteResult<T> {
        let req = self.request(Method::GET, path).query(query);
        let resp = self.send(&Method::GET, path, req).await?;
        decode(resp, path).await
    }

    /// `method path` with a JSON body (or none) → JSON.
    pub async fn call_json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> RemoteResult<T> {
        let mut req = self.request(method.clone(), path);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = self.send(&method, path, req).await?;
        decode(resp, path).await
    }

    /// `POST path` with a JSON body, ignoring the answer's body (`{"success": true}`).
    pub async fn post(&self, path: &str, body: Option<&Value>) -> RemoteResult<()> {
        let _: Value = self.call_json(Method::POST, path, body).await?;
        Ok(())
    }

    /// `GET /server_info`, checked to come from an agent server: a JSON object with a version
    /// or uptime. HTML, 404 or other JSON say "not an agent server".
    pub async fn server_info(&self) -> RemoteResult<Value> {
        let path = "/server_info";
        let not_server = |detail: String| RemoteError::NotAnAgentServer {
            url: self.base.clone(),
            detail,
        };
        let resp = match self
            .send(&Method::GET, path, self.request(Method::GET, path))
            .await
        {
            Ok(r) => r,
            Err(RemoteError::NotFound(_)) => {
                return Err(not_server("GET /server_info answered 404".into()));
            }
            Err(RemoteError::Status { status, .. }) => {
                return Err(not_server(format!(
                    "GET /server_info answered HTTP {status}"
                )));
            }
            Err(e) => return Err(e),
        };
        let text = resp.text().await.map_err(|e| RemoteError::Unreachable {
            url: self.base.clone(),
            detail: e.to_string(),
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|_| {
            let head: String = text.trim_start().chars().take(40).collect();
            not_server(format!(
                "GET /server_info is not JSON (starts with {head:?})"
            ))
        })?;
        let looks_right = value.as_object().is_some_and(|o| {
            ["version", "sdk_version", "uptime"]
                .iter()
                .any(|k| o.contains_key(*k))
        });
        if !looks_right {
            return Err(not_server(
                "GET /server_info has no version or uptime".into(),
            ));
        }
        Ok(value)
    }

    /// Checks that the session key is accepted (an authenticated, read-only call).
    pub async fn check_key(&self) -> RemoteResult<()> {
        let _: Value = self
            .get_json("/api/conversations/search", &[("limit", "1".to_owned())])
            .await?;
        Ok(())
    }
}

/// Reads a JSON body as `T`.
pub(super) async fn decode<T: DeserializeOwned>(resp: Response, what: &str) -> RemoteResult<T> {
    let bytes = resp.bytes().await.map_err(|e| RemoteError::Decode {
        what: what.to_owned(),
        detail: e.to_string(),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        let head: String = String::from_utf8_lossy(&bytes).chars().take(80).collect();
        RemoteError::Decode {
            what: what.to_owned(),
            detail: format!("{e} (body starts with {head:?})"),
        }
    })
}

/// FastAPI's `{"detail": ...}` as text, else the body's start.
fn detail_of(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(v) => match v.get("detail") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => v.to_string(),
        },
        Err(_) => body.chars().take(200).collect(),
    }
}

/// The `code` of a JSON error body, if it has one.
fn code_of(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    v.get("code")?.as_str().map(str::to_owned)
}

/// The error and its causes on one line (reqwest hides "connection refused" in a source).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_mapped_to_websockets() {
        assert!(matches!(
            ServerClient::new("localhost:8000", None),
            Err(RemoteError::InvalidUrl(_))
        ));
        assert!(matches!(
            ServerClient::new("http://", None),
            Err(RemoteError::InvalidUrl(_))
        ));
        let c = ServerClient::new("http://127.0.0.1:8000/", Some(String::new())).unwrap();
        assert_eq!(c.base_url(), "http://127.0.0.1:8000");
        assert_eq!(c.session_key(), None);
        assert_eq!(
            c.ws_url("/sockets/events/x"),
            "ws://127.0.0.1:8000/sockets/events/x"
        );
        let c = ServerClient::new("https://h.example", None).unwrap();
        assert_eq!(c.ws_url("/a"), "wss://h.example/a");
    }

    #[test]
    fn detail_reads_fastapi_shapes() {
        assert_eq!(detail_of(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(detail_of("<html>"), "<html>");
    }
}
