//! HTTP plumbing shared by the demo server and `tandem-testkit`'s scripted server: an axum
//! server on its own thread, and the responses both send.

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::oneshot;

/// An axum server on its own thread and current-thread runtime, so that it can be started from
/// sync code or inside any Tokio runtime, and a test's paused clock does not stop it. Dropping
/// it stops the server and cancels the connections still in flight.
#[derive(Debug)]
pub struct BackgroundServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
}

impl BackgroundServer {
    /// Binds `addr` (port 0 picks a free one) and serves `router` there on a thread named
    /// `name-PORT`; `name` also prefixes what it prints when serving fails.
    pub fn bind(addr: SocketAddr, router: Router, name: &str) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (shutdown, shutdown_rx) = oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let name = name.to_owned();
        std::thread::Builder::new()
            .name(format!("{name}-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(err) => {
                            eprintln!("{name}: {err}");
                            return;
                        }
                    };
                    tokio::select! {
                        result = axum::serve(listener, router).into_future() => {
                            if let Err(err) = result {
                                eprintln!("{name} stopped: {err}");
                            }
                        }
                        _ = shutdown_rx => {}
                    }
                });
                // Dropping the runtime here cancels connections still in flight.
            })?;
        Ok(Self {
            addr,
            shutdown: Some(shutdown),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Waits `ms` milliseconds (not at all for 0).
pub async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// A server-sent-events response of `(event name, data)` pairs, `chunk_delay_ms` apart.
pub fn sse_response(events: Vec<(Option<String>, String)>, chunk_delay_ms: u64) -> Response {
    let stream = futures::stream::iter(events.into_iter().enumerate()).then(
        move |(i, (name, data))| async move {
            if i > 0 {
                sleep_ms(chunk_delay_ms).await;
            }
            let text = match name {
                Some(name) => format!("event: {name}\ndata: {data}\n\n"),
                None => format!("data: {data}\n\n"),
            };
            Ok::<_, Infallible>(Bytes::from(text))
        },
    );
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A response with this status, content type and body.
pub fn text_response(status: StatusCode, content_type: &str, body: String) -> Response {
    let mut response = (status, body).into_response();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

/// A JSON response with this status.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    text_response(status, "application/json", body.to_string())
}
