//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp no longer has: GET an event
//! stream, whose first `endpoint` event names the URL to POST JSON-RPC messages to; answers
//! come back as `message` events on the stream, matched to requests by id (by rmcp).

use std::collections::BTreeMap;
use std::pin::Pin;

use eventsource_stream::Eventsource;
use futures::{SinkExt, Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::{Diagnostics, RmcpConnection, Rx, SharedDiagnostics, Wire};
use crate::{McpError, McpErrorKind};

type Events = Pin<
    Box<
        dyn Stream<
                Item = Result<
                    eventsource_stream::Event,
                    eventsource_stream::EventStreamError<reqwest::Error>,
                >,
            > + Send,
    >,
>;

pub(super) async fn connect(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<RmcpConnection, McpError> {
    let conn_err = |m: String| McpError::new(name, McpErrorKind::Connection, m);
    let mut header_map = HeaderMap::new();
    for (k, v) in headers {
        let bad = |what: &str| {
            McpError::new(
                name,
                McpErrorKind::Config,
                format!("header `{k}`: invalid {what}"),
            )
        };
        header_map.insert(
            HeaderName::from_bytes(k.as_bytes()).map_err(|_| bad("name"))?,
            HeaderValue::from_str(v).map_err(|_| bad("value"))?,
        );
    }
    let client = reqwest::Client::builder()
        .default_headers(header_map)
        .build()
        .map_err(|e| conn_err(format!("no HTTP client: {e}")))?;
    let base = reqwest::Url::parse(url)
        .map_err(|e| McpError::new(name, McpErrorKind::Config, format!("bad url {url}: {e}")))?;
    let response = client
        .get(base.clone())
        .header(reqwest::header::ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| conn_err(format!("GET {url} failed: {e}")))?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(McpError::new(
            name,
            McpErrorKind::Auth,
            "answered 401: it requires OAuth sign-in or a token; give an access token in the server's `auth` or `headers`",
        ));
    }
    if !status.is_success() {
        return Err(conn_err(format!("GET {url} answered {status}")));
    }
    let mut events: Events = Box::pin(response.bytes_stream().eventsource());
    // The first `endpoint` event says where to POST.
    let endpoint = loop {
        match events.next().await {
            Some(Ok(ev)) if ev.event == "endpoint" => {
                break base.join(ev.data.trim()).map_err(|e| {
                    McpError::new(
                        name,
                        McpErrorKind::Protocol,
                        format!("sent a bad endpoint {:?}: {e}", ev.data),
                    )
                })?;
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(conn_err(format!("the event stream failed: {e}"))),
            None => {
                return Err(conn_err(
                    "the event stream ended before naming its endpoint".into(),
                ));
            }
        }
    };

    let diag = SharedDiagnostics::default();
    let spawn_transport = {
        let diag = diag.clone();
        move |wire: Wire| {
            let Wire {
                mut outgoing,
                mut incoming,
            } = wire;
            let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
            let post_diag = diag.clone();
            tokio::spawn(async move {
                while let Some(msg) = outgoing.next().await {
                    let sent = client.post(endpoint.clone()).json(&msg).send().await;
                    let failure = match sent {
                        Ok(r) if r.status().is_success() => continue,
                        Ok(r) => format!("POST {endpoint} answered {}", r.status()),
                        Err(e) => format!("POST {endpoint} failed: {e}"),
                    };
                    Diagnostics::lock(&post_diag).ended.get_or_insert(failure);
                    let _ = stop_tx.send(true);
                    break;
                }
            });
            tokio::spawn(async move {
                loop {
                    let ev = tokio::select! {
                        ev = events.next() => ev,
                        _ = stop_rx.wait_for(|s| *s) => break,
                    };
                    let ev = match ev {
                        Some(Ok(ev)) => ev,
                        Some(Err(e)) => {
                            Diagnostics::lock(&diag)
                                .ended
                                .get_or_insert(format!("the event stream failed: {e}"));
                            break;
                        }
                        None => {
                            Diagnostics::lock(&diag)
                                .ended
                                .get_or_insert("the event stream ended".into());
                            break;
                        }
                    };
                    if !(ev.event.is_empty() || ev.event == "message") {
                        continue;
                    }
                    match serde_json::from_str::<Rx>(&ev.data) {
                        Ok(msg) => {
                            if incoming.send(msg).await.is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            let excerpt: String = ev.data.chars().take(120).collect();
                            Diagnostics::lock(&diag)
                                .protocol_error
                                .get_or_insert(format!("{excerpt:?} ({e})"));
                            break;
                        }
                    }
                }
            });
        }
    };
    RmcpConnection::start(name, diag, spawn_transport, None).await
}
