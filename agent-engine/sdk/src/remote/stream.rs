//! The live event stream of one remote conversation: `/sockets/events/{id}` with first-frame
//! auth, a local copy of the event log, and reconnects that catch up through REST.
//!
//! No gap, no duplicate: on every (re)connect the socket is subscribed first, then the events
//! appended since the last one seen are fetched with `events/search` (paging from that event),
//! and only then are the frames that queued up on the socket read. Every event is kept once, by
//! id, in the order first seen — REST pages and socket frames both come in log order.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::{Event, ExecutionStatus};
use tokio::net::TcpStream;
use tokio::sync::{Notify, broadcast, watch};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

use super::error::{RemoteError, RemoteResult};
use super::http::ServerClient;

/// How long the server has to send its first frame after the socket opens (upstream's SDK
/// waits 30 s too).
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Client pings this often; a socket silent for three times as long is considered dead.
const PING_EVERY: Duration = Duration::from_secs(20);
/// Longest wait between reconnect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What the stream knows about the conversation's run loop; watch it with
/// [`RemoteConversation::live`](super::RemoteConversation::live).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveState {
    /// The latest execution status seen (frame, snapshot or event).
    pub status: ExecutionStatus,
    /// The socket is open and caught up.
    pub connected: bool,
    /// Connections made (each starts with a state snapshot frame).
    pub connections: u64,
    /// `full_state` frames seen after a connection's first, with a status other than
    /// `running`: the server sends one each time a run loop exits.
    pub runs_ended: u64,
    /// Field-level `execution_status` events seen.
    pub status_updates: u64,
    /// Why the stream stopped for good (unauthorized, conversation gone), if it did.
    pub fatal: Option<String>,
}

#[derive(Default)]
struct Log {
    events: Vec<Event>,
    seen: HashSet<String>,
    last_state: Option<Value>,
}

/// State shared by the conversation handle and its stream task.
pub(super) struct Shared {
    pub(super) id: String,
    pub(super) client: ServerClient,
    log: Mutex<Log>,
    events_tx: broadcast::Sender<Event>,
    pub(super) live: watch::Sender<LiveState>,
    sync_lock: tokio::sync::Mutex<()>,
    pub(super) cancel: CancellationToken,
    reconnect: Notify,
}

#[derive(Deserialize)]
struct EventPage {
    #[serde(default)]
    items: Vec<Value>,
    #[serde(default)]
    next_page_id: Option<String>,
}

enum End {
    Cancelled,
    Dropped,
    Fatal(RemoteError),
}

impl Shared {
    pub(super) fn new(id: String, client: ServerClient, status: ExecutionStatus) -> Arc<Self> {
        let (events_tx, _) = broadcast::channel(4096);
        let (live, _) = watch::channel(LiveState {
            status,
            ..LiveState::default()
        });
        Arc::new(Self {
            id,
            client,
            log: Mutex::new(Log::default()),
            events_tx,
            live,
            sync_lock: tokio::sync::Mutex::new(()),
            cancel: CancellationToken::new(),
            reconnect: Notify::new(),
        })
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every event so far and a receiver of every later one, with no gap between them.
    pub(super) fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let log = self.log();
        (log.events.clone(), self.events_tx.subscribe())
    }

    /// A copy of the events so far.
    pub(super) fn events(&self) -> Vec<Event> {
        self.log().events.clone()
    }

    /// The latest `full_state` value the server sent.
    pub(super) fn last_state(&self) -> Option<Value> {
        self.log().last_state.clone()
    }

    /// Asks the stream to drop its socket and reconnect (catching up through REST).
    pub(super) fn force_reconnect(&self) {
        self.reconnect.notify_one();
    }

    /// Takes one event in: keeps it once, updates the live state, tells subscribers.
    fn ingest(&self, event: Event, first_frame: bool) -> bool {
        let mut log = self.log();
        if let Event::StateUpdate(u) = &event {
            let status = if u.key == "full_state" {
                u.value.get("execution_status").cloned()
            } else if u.key == "execution_status" {
                Some(u.value.clone())
            } else {
                None
            };
            let status = status.and_then(|v| serde_json::from_value::<ExecutionStatus>(v).ok());
            if u.key == "full_state" || first_frame {
                if u.key == "full_state" {
                    log.last_state = Some(u.value.clone());
                }
                self.live.send_modify(|l| {
                    if let Some(s) = status {
                        l.status = s;
                    }
                    if first_frame {
                        l.connections += 1;
                    } else if l.status != ExecutionStatus::Running {
                        l.runs_ended += 1;
                    }
                });
                let _ = self.events_tx.send(event);
                return false;
            }
            if log.seen.contains(event.id()) {
                return false;
            }
            if let Some(s) = status {
                self.live.send_modify(|l| {
                    l.status = s;
                    l.status_updates += 1;
                });
            }
        }
        if event.is_transient() {
            let _ = self.events_tx.send(event);
            return false;
        }
        if !log.seen.insert(event.id().to_owned()) {
            return false;
        }
        log.events.push(event.clone());
        // Sent under the lock so that `subscribe` never sees an event twice or misses one.
        let _ = self.events_tx.send(event);
        true
    }

    fn ingest_text(&self, text: &str, first_frame: bool) {
        match serde_json::from_str::<Event>(text) {
            Ok(ev) => {
                self.ingest(ev, first_frame);
            }
            Err(e) => tracing::warn!(conversation = %self.id, "unreadable event frame: {e}"),
        }
    }

    /// Fetches the events appended since the last one seen (all of them the first time).
    /// Returns how many were new.
    pub(super) async fn catch_up(&self) -> RemoteResult<usize> {
        let _one_at_a_time = self.sync_lock.lock().await;
        let path = format!("/api/conversations/{}/events/search", self.id);
        let after = self.log().events.last().map(|e| e.id().to_owned());
        let mut page = after.clone();
        let mut from_start = after.is_none();
        let mut first_page = true;
        let mut added = 0;
        loop {
            let mut query = vec![("limit", "100".to_owned())];
            if let Some(p) = &page {
                query.push(("page_id", p.clone()));
            }
            let result: RemoteResult<EventPage> = self.client.get_json(&path, &query).await;
            let resp = match result {
                Ok(r) => r,
                // A server that cannot page from our event: take everything, dedupe drops the rest.
                Err(RemoteError::Status { .. } | RemoteError::NotFound(_))
                    if first_page && !from_start =>
                {
                    from_start = true;
                    page = None;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut items = resp.items.into_iter();
            if first_page && !from_start {
                first_page = false;
                let starts_at_ours = items
                    .as_slice()
                    .first()
                    .and_then(|v| v.get("id"))
                    .and_then(Value::as_str)
                    == after.as_deref();
                if !starts_at_ours {
                    from_start = true;
                    page = None;
                    continue;
                }
                items.next();
            }
            first_page = false;
            for raw in items {
                match serde_json::from_value::<Event>(raw) {
                    Ok(ev) => added += usize::from(self.ingest(ev, false)),
                    Err(e) => tracing::warn!(conversation = %self.id, "unreadable event: {e}"),
                }
            }
            match resp.next_page_id {
                Some(p) => page = Some(p),
                None => break,
            }
        }
        Ok(added)
    }

    /// Opens the socket, authenticates, reads the snapshot frame and catches up. The socket is
    /// subscribed before the REST catch-up, so nothing appended meanwhile is missed.
    async fn open(&self) -> RemoteResult<Ws> {
        let url = self.client.ws_url(&format!("/sockets/events/{}", self.id));
        let base = self.client.base_url().to_owned();
        let (mut ws, _) = match tokio::time::timeout(
            READY_TIMEOUT,
            tokio_tungstenite::connect_async(url.as_str()),
        )
        .await
        {
            Err(_) => return Err(RemoteError::Timeout(format!("opening {url}"))),
            Ok(Err(e)) => return Err(handshake_error(e, &base, &self.id)),
            Ok(Ok(pair)) => pair,
        };
        if let Some(key) = self.client.session_key() {
            let auth = serde_json::json!({"type": "auth", "session_api_key": key}).to_string();
            ws.send(WsMessage::text(auth))
                .await
                .map_err(|e| RemoteError::Stream(e.to_string()))?;
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = match tokio::time::timeout(left, ws.next()).await {
                Err(_) => return Err(RemoteError::Timeout(format!("the first frame on {url}"))),
                Ok(None) => {
                    return Err(RemoteError::Stream(
                        "the server closed the event socket".into(),
                    ));
                }
                Ok(Some(Err(e))) => return Err(RemoteError::Stream(e.to_string())),
                Ok(Some(Ok(m))) => m,
            };
            match msg {
                WsMessage::Text(t) => {
                    self.ingest_text(t.as_str(), true);
                    break;
                }
                WsMessage::Close(frame) => {
                    return Err(
                        match close_error(frame.as_ref().map(|f| f.code), &base, &self.id) {
                            Some(e) => e,
                            None => RemoteError::Stream(
                                "the server closed the event socket before its first frame".into(),
                            ),
                        },
                    );
                }
                _ => {}
            }
        }
        self.catch_up().await?;
        self.live.send_modify(|l| l.connected = true);
        Ok(ws)
    }

    /// Reads frames until the socket drops, the handle closes or a reconnect is asked for.
    async fn pump(&self, ws: &mut Ws) -> End {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        let mut last_heard = Instant::now();
        loop {
            tokio::select! {
                () = self.cancel.cancelled() => {
                    let _ = ws.close(None).await;
                    return End::Cancelled;
                }
                () = self.reconnect.notified() => return End::Dropped,
                _ = ping.tick() => {
                    if last_heard.elapsed() > PING_EVERY * 3 {
                        return End::Dropped;
                    }
                    if ws.send(WsMessage::Ping(Vec::new().into())).await.is_err() {
                        return End::Dropped;
                    }
                }
                msg = ws.next() => {
                    last_heard = Instant::now();
                    match msg {
                        Some(Ok(WsMessage::Text(t))) => self.ingest_text(t.as_str(), false),
                        Some(Ok(WsMessage::Close(frame))) => {
                            let base = self.client.base_url().to_owned();
                            return match close_error(frame.as_ref().map(|f| f.code), &base, &self.id) {
                                Some(e) => End::Fatal(e),
                                None => End::Dropped,
                            };
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => return End::Dropped,
                    }
                }
            }
        }
    }
}

/// Connects for the first time: returns once the stream is live and caught up, or the error
/// that prevented it. The stream then keeps itself connected until `shared.cancel` fires.
pub(super) async fn start(shared: Arc<Shared>) -> RemoteResult<()> {
    // A server still setting the conversation up may drop the first socket: retry what a
    // retry can fix until the ready timeout, as the official client waits for readiness.
    let started = Instant::now();
    let mut attempt: u32 = 0;
    let ws = loop {
        match shared.open().await {
            Ok(ws) => break ws,
            Err(
                e @ (RemoteError::Unauthorized { .. }
                | RemoteError::NotFound(_)
                | RemoteError::Unreachable { .. }),
            ) => {
                return Err(e);
            }
            Err(e) if started.elapsed() >= READY_TIMEOUT => return Err(e),
            Err(e) => {
                attempt += 1;
                tracing::debug!(conversation = %shared.id, "event stream not ready ({attempt}): {e}");
                tokio::time::sleep(Duration::from_millis(50u64 << attempt.min(5)).min(MAX_BACKOFF))
                    .await;
            }
        }
    };
    tokio::spawn(keep_alive(shared, ws));
    Ok(())
}

async fn keep_alive(shared: Arc<Shared>, mut ws: Ws) {
    let mut failures: u32 = 0;
    loop {
        let end = shared.pump(&mut ws).await;
        shared.live.send_modify(|l| l.connected = false);
        match end {
            End::Cancelled => return,
            End::Fatal(e) => {
                shared.live.send_modify(|l| l.fatal = Some(e.to_string()));
                return;
            }
            End::Dropped => {}
        }
        drop(ws);
        // Reconnect with a short backoff until it works or the handle closes.
        ws = loop {
            let wait = Duration::from_millis(50u64 << failures.min(6)).min(MAX_BACKOFF);
            if failures > 0 {
                tokio::select! {
                    () = shared.cancel.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
            }
            if shared.cancel.is_cancelled() {
                return;
            }
            match shared.open().await {
                Ok(ws) => {
                    failures = 0;
                    break ws;
                }
                Err(e @ (RemoteError::Unauthorized { .. } | RemoteError::NotFound(_))) => {
                    shared.live.send_modify(|l| l.fatal = Some(e.to_string()));
                    return;
                }
                Err(e) => {
                    failures += 1;
                    tracing::debug!(conversation = %shared.id, "event stream reconnect failed ({failures}): {e}");
                }
            }
        };
    }
}

fn close_error(code: Option<CloseCode>, base: &str, id: &str) -> Option<RemoteError> {
    match code.map(u16::from) {
        Some(4001) => Some(RemoteError::Unauthorized {
            url: base.to_owned(),
        }),
        Some(4004) => Some(RemoteError::NotFound(format!("conversation {id}"))),
        _ => None,
    }
}

fn handshake_error(e: tokio_tungstenite::tungstenite::Error, base: &str, id: &str) -> RemoteError {
    use tokio_tungstenite::tungstenite::Error as E;
    match e {
        E::Http(resp) => match resp.status().as_u16() {
            401 | 403 => RemoteError::Unauthorized {
                url: base.to_owned(),
            },
            404 => RemoteError::NotFound(format!("event socket of conversation {id}")),
            s => RemoteError::Stream(format!("the event socket upgrade answered HTTP {s}")),
        },
        E::Io(io) => RemoteError::Unreachable {
            url: base.to_owned(),
            detail: io.to_string(),
        },
        other => RemoteError::Stream(other.to_string()),
    }
}
