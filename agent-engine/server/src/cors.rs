//! CORS for browser clients on other origins: the desktop webview (`tauri://localhost`), a UI
//! dev server, or a web page the operator trusts. Origins are allowed by exact match against a
//! configured list (`tandem serve --allow-origin`, `TANDEM_ALLOWED_ORIGINS`), checked when the
//! list is read; there is no wildcard, and no credentials mode: the session key travels in a
//! header, never a cookie. tower-http's [`CorsLayer`] writes the headers.
//!
//! A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin is
//! answered here, before authentication, because browsers send preflights without the key;
//! every real request still goes through the key check. A request from any other origin gets
//! no CORS headers at all, so the browser keeps its answer from the page.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderName, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use tower::{Layer, ServiceExt};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::gateway::{CONVERSATION_HEADER, CONVERSATION_HEADER_ALIAS};

/// Methods a preflight may ask for.
pub const ALLOWED_METHODS: [Method; 6] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
    Method::OPTIONS,
];
/// Request headers browser clients may send (the last two name a conversation to the
/// OpenAI-compatible gateway).
pub const ALLOWED_HEADERS: [HeaderName; 5] = [
    HeaderName::from_static("x-session-api-key"),
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    HeaderName::from_static(CONVERSATION_HEADER),
    HeaderName::from_static(CONVERSATION_HEADER_ALIAS),
];
/// Response headers scripts may read beyond the CORS-safelisted ones.
pub const EXPOSED_HEADERS: [HeaderName; 2] = [
    header::CONTENT_DISPOSITION,
    HeaderName::from_static(CONVERSATION_HEADER),
];
/// How long a browser may cache a preflight answer.
pub const MAX_AGE: Duration = Duration::from_secs(600);

/// An origin in the allow list that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid allowed origin `{origin}`: {reason}")]
pub struct OriginError {
    /// The value as given.
    pub origin: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Which browser origins may call the server. Empty: none (no CORS headers are ever sent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cors {
    origins: Vec<String>,
    loopback_dev_servers: bool,
}

impl Cors {
    /// Allows exactly `origins` (`scheme://host[:port]`, as browsers send them in `Origin`).
    /// Scheme and host are compared case-insensitively; anything that is not an origin
    /// (a path, a trailing slash, `*`, `null`, no scheme) is refused with the reason.
    pub fn new<I, S>(origins: I) -> Result<Self, OriginError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Vec::new();
        for o in origins {
            let o = normalize(o.as_ref())?;
            if !list.contains(&o) {
                list.push(o);
            }
        }
        Ok(Self {
            origins: list,
            loopback_dev_servers: false,
        })
    }

    /// [`new`](Self::new) from a comma-separated list (`TANDEM_ALLOWED_ORIGINS`); blank items
    /// are skipped.
    pub fn from_list(list: &str) -> Result<Self, OriginError> {
        Self::new(list.split(',').map(str::trim).filter(|o| !o.is_empty()))
    }

    /// Also allows `http://localhost:PORT` and `http://127.0.0.1:PORT` for any port (a UI dev
    /// server on this machine; the desktop's dev builds).
    pub fn with_loopback_dev_servers(mut self) -> Self {
        self.loopback_dev_servers = true;
        self
    }

    /// The allowed origins, normalized.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether no origin is allowed.
    pub fn is_empty(&self) -> bool {
        self.origins.is_empty() && !self.loopback_dev_servers
    }

    /// Whether a request whose `Origin` header is `origin` gets CORS headers.
    pub fn allows(&self, origin: &str) -> bool {
        if self.origins.iter().any(|o| o == origin) {
            return true;
        }
        self.loopback_dev_servers
            && ["http://localhost:", "http://127.0.0.1:"].iter().any(|p| {
                origin
                    .strip_prefix(p)
                    .is_some_and(|port| port.parse::<u16>().is_ok())
            })
    }

    /// `router` wrapped in this CORS policy (the outermost layer, so preflights skip the key
    /// check). Without allowed origins the router is returned unchanged.
    pub fn apply<S: Clone + Send + Sync + 'static>(self, router: Router<S>) -> Router<S> {
        if self.is_empty() {
            return router;
        }
        let policy = Arc::new(self);
        let allowed = Arc::clone(&policy);
        let layer = CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |origin, _| {
                origin.to_str().is_ok_and(|o| allowed.allows(o))
            }))
            .allow_methods(ALLOWED_METHODS)
            .allow_headers(ALLOWED_HEADERS)
            .expose_headers(EXPOSED_HEADERS)
            .max_age(MAX_AGE);
        router.layer(axum::middleware::from_fn_with_state(
            Gate { policy, layer },
            gate,
        ))
    }
}

/// `scheme://host[:port]` with scheme and host lowercased, or why it is not an origin.
fn normalize(origin: &str) -> Result<String, OriginError> {
    let err = |reason| OriginError {
        origin: origin.to_owned(),
        reason,
    };
    if origin == "*" {
        return Err(err(
            "wildcards are not allowed; list each origin (scheme://host[:port])",
        ));
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err(err(
            "expected scheme://host[:port], e.g. https://app.example.com",
        ));
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(err("the scheme is not valid"));
    }
    if rest.is_empty() {
        return Err(err("the host is missing"));
    }
    if rest.contains(['/', '?', '#']) {
        return Err(err(
            "an origin has no path, query or trailing slash (scheme://host[:port])",
        ));
    }
    if rest.contains('@') || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(err("the host is not valid"));
    }
    let (host, port) = if rest.starts_with('[') {
        let Some(end) = rest.find(']') else {
            return Err(err("the IPv6 host has no closing `]`"));
        };
        let (host, after) = rest.split_at(end + 1);
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => return Err(err("the host is not valid")),
            },
        }
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.is_empty() {
        return Err(err("the host is missing"));
    }
    if let Some(p) = port
        && p.parse::<u16>().is_err()
    {
        return Err(err("the port is not a number from 0 to 65535"));
    }
    Ok(format!(
        "{}://{}{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase(),
        port.map(|p| format!(":{p}")).unwrap_or_default()
    ))
}

/// What [`gate`] needs: the policy, and the layer that writes the headers.
#[derive(Clone)]
struct Gate {
    policy: Arc<Cors>,
    layer: CorsLayer,
}

/// Sends only requests from allowed origins through tower-http's layer. On its own it answers
/// every `OPTIONS` and adds `Vary` and the exposed headers to every response, whatever the
/// origin; here any other request (another origin, none, or an `OPTIONS` that is no
/// preflight) reaches the router as it is and gets no CORS headers.
async fn gate(State(gate): State<Gate>, req: Request, next: Next) -> Response {
    let allowed = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .is_some_and(|o| gate.policy.allows(o));
    let options = req.method() == Method::OPTIONS;
    let preflight = options
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if !allowed || (options && !preflight) {
        return next.run(req).await;
    }
    let Ok(mut resp) = gate.layer.layer(next).oneshot(req).await;
    if preflight {
        // tower-http answers 200; a preflight answer has no content.
        *resp.status_mut() = StatusCode::NO_CONTENT;
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalized_and_matched_exactly() {
        let c = Cors::new([
            "HTTPS://App.Example.com",
            "http://[::1]:5173",
            "tauri://localhost",
        ])
        .unwrap();
        assert_eq!(
            c.origins(),
            [
                "https://app.example.com",
                "http://[::1]:5173",
                "tauri://localhost"
            ]
        );
        assert!(c.allows("https://app.example.com"));
        assert!(c.allows("tauri://localhost"));
        assert!(!c.allows("https://app.example.com:444"));
        assert!(!c.allows("http://app.example.com"));
        assert!(!c.allows("https://evil.app.example.com"));
        assert!(!c.allows("http://localhost:5173"));
        assert!(!c.allows("null"));
        let dev = c.with_loopback_dev_servers();
        assert!(dev.allows("http://localhost:5173"));
        assert!(dev.allows("http://127.0.0.1:1420"));
        assert!(!dev.allows("http://localhost:notaport"));
        assert!(!dev.allows("http://localhost"));
    }

    #[test]
    fn lists_skip_blanks_and_duplicates() {
        let c = Cors::from_list(" https://a.example , ,https://b.example:8443,https://a.example")
            .unwrap();
        assert_eq!(c.origins(), ["https://a.example", "https://b.example:8443"]);
        assert!(Cors::from_list("").unwrap().is_empty());
    }

    #[test]
    fn what_is_not_an_origin_is_refused_with_the_reason() {
        for (bad, why) in [
            ("*", "wildcard"),
            ("app.example.com", "scheme://host"),
            ("https://app.example.com/", "trailing slash"),
            ("https://app.example.com/ui", "no path"),
            ("https://", "host is missing"),
            ("https://app.example.com:99999", "port"),
            ("https://user@app.example.com", "host is not valid"),
            ("1http://x", "scheme"),
            ("http://[::1", "closing"),
        ] {
            let e = Cors::new([bad]).unwrap_err();
            assert_eq!(e.origin, bad);
            assert!(e.to_string().contains(bad), "{e}");
            assert!(e.reason.contains(why), "{bad}: {}", e.reason);
        }
    }
}
