//! `/api/conversations/{id}/events`: search, count, get, batch get (ids in a GET body), send a
//! message, respond to confirmation, and the Server-Sent Events stream (Tandem). Also the
//! [`FrameFeed`] that the WebSocket and the SSE stream share: a `full_state` frame first,
//! the replay asked for, then live events with a `full_state` after every run.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::header;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chrono::NaiveDateTime;
use serde_json::Value;
use tandem_protocol::{
    ApproveEditedRequest, ApproveEditedResponse, ConfirmationResponseRequest, Event,
    SendMessageRequest, Source, SuccessResponse,
};
use tandem_sdk::RunState;
use tandem_sdk::SdkError;
use tokio::sync::{broadcast, watch};

use crate::AppState;
use crate::conversations::{message_of, send};
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, QueryMap, conversation_id, parse_json};
use crate::info::full_state_event;
use crate::registry::{Live, WatchGuard};

async fn live(state: &AppState, raw: &str) -> Result<Arc<Live>> {
    let id = conversation_id(raw)?;
    state.registry.get(&id).await
}

/// Parses an ISO time; zone-less times are local, like event timestamps.
fn parse_time(raw: &str, name: &str) -> Result<NaiveDateTime> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(raw) {
        return Ok(t.with_timezone(&chrono::Local).naive_local());
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S%.f",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(raw, f) {
            return Ok(t);
        }
    }
    Err(ApiError::field(
        &["query", name],
        "datetime_parsing",
        "Input should be a valid datetime",
        Value::from(raw),
    ))
}

fn event_time(e: &Event) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(e.timestamp(), "%Y-%m-%dT%H:%M:%S%.f").ok()
}

fn source_str(s: Source) -> &'static str {
    match s {
        Source::Agent => "agent",
        Source::User => "user",
        Source::Environment => "environment",
    }
}

/// The events matching the search filters, in the requested order.
/// Indices into `events` of those `q` selects, in the order it asks for.
fn filter(events: &[Event], q: &QueryMap) -> Result<Vec<usize>> {
    let kind = q.get("kind");
    let source = q.get("source");
    let body = q.get("body").map(str::to_lowercase);
    let gte = q
        .get("timestamp__gte")
        .map(|t| parse_time(t, "timestamp__gte"))
        .transpose()?;
    let lt = q
        .get("timestamp__lt")
        .map(|t| parse_time(t, "timestamp__lt"))
        .transpose()?;
    let desc =
        q.choice("sort_order", "TIMESTAMP", &["TIMESTAMP", "TIMESTAMP_DESC"])? == "TIMESTAMP_DESC";
    let mut out: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| kind.is_none_or(|k| e.kind() == k))
        .filter(|(_, e)| source.is_none_or(|s| e.source().is_some_and(|x| source_str(x) == s)))
        .filter(|(_, e)| match &body {
            None => true,
            Some(b) => matches!(e, Event::Message(m) if m.llm_message.text().to_lowercase().contains(b.as_str())),
        })
        .filter(|(_, e)| gte.is_none_or(|t| event_time(e).is_some_and(|x| x >= t)))
        .filter(|(_, e)| lt.is_none_or(|t| event_time(e).is_some_and(|x| x < t)))
        .map(|(i, _)| i)
        .collect();
    if desc {
        out.reverse();
    }
    Ok(out)
}

/// `GET .../events/search`.
pub async fn search(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    q: QueryMap,
) -> Result<Response> {
    let limit = usize::try_from(q.int("limit", 100, 1, 100)?).unwrap_or(100);
    let live = live(&state, &raw).await?;
    // Written from the JSON each event was persisted as: a page costs copying bytes, not
    // serializing events.
    let body = {
        let view = live.handle.view();
        let selected: Vec<(usize, &str)> = filter(&view.events, &q)?
            .into_iter()
            .map(|i| (i, view.events[i].id()))
            .collect();
        let (items, next_page_id) =
            crate::extract::page(selected, q.get("page_id"), limit, |(_, id)| id);
        let mut out = Vec::with_capacity(items.len() * 1024 + 64);
        out.extend_from_slice(b"{\"items\":[");
        for (n, &(i, _)) in items.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            match view.event_json(i).filter(|j| !j.is_empty()) {
                Some(json) => out.extend_from_slice(json),
                None => serde_json::to_writer(&mut out, &view.events[i])
                    .map_err(|e| ApiError::Internal(format!("serializing an event: {e}")))?,
            }
        }
        out.extend_from_slice(b"],\"next_page_id\":");
        serde_json::to_writer(&mut out, &next_page_id)
            .map_err(|e| ApiError::Internal(format!("serializing the page id: {e}")))?;
        out.push(b'}');
        out
    };
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// `GET .../events/count`.
pub async fn count(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    q: QueryMap,
) -> Result<Json<usize>> {
    let live = live(&state, &raw).await?;
    let view = live.handle.view();
    Ok(Json(filter(&view.events, &q)?.len()))
}

/// `GET .../events/{event_id}`.
pub async fn get_one(
    State(state): State<AppState>,
    UrlPath((raw, eid)): UrlPath<(String, String)>,
) -> Result<Json<Event>> {
    let live = live(&state, &raw).await?;
    let view = live.handle.view();
    view.events
        .iter()
        .find(|e| e.id() == eid)
        .cloned()
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// `GET .../events` with a JSON list of ids in the body: `null` for unknown ids.
pub async fn batch(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    body: Bytes,
) -> Result<Json<Vec<Option<Event>>>> {
    let live = live(&state, &raw).await?;
    let ids: Vec<String> = if body.is_empty() {
        return Err(ApiError::field(
            &["body"],
            "missing",
            "Field required",
            Value::Null,
        ));
    } else {
        parse_json(&body)?
    };
    let view = live.handle.view();
    Ok(Json(
        ids.iter()
            .map(|id| view.events.iter().find(|e| e.id() == id).cloned())
            .collect(),
    ))
}

/// `POST .../events`: a user message; `run: true` starts the loop.
pub async fn post(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<SendMessageRequest>,
) -> Result<Json<SuccessResponse>> {
    let live = live(&state, &raw).await?;
    let message = message_of(&req, &["body"])?;
    send(&live, message, req.run).await?;
    Ok(Json(SuccessResponse::OK))
}

/// `POST .../events/respond_to_confirmation`.
pub async fn respond(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<ConfirmationResponseRequest>,
) -> Result<Json<SuccessResponse>> {
    let live = live(&state, &raw).await?;
    live.handle
        .respond_to_confirmation(req.accept, Some(req.reason))
        .await?;
    Ok(Json(SuccessResponse::OK))
}

/// `POST .../events/approve_edited` (Tandem): one pending action runs with the person's
/// arguments in place of the agent's. 409 when that action does not wait for confirmation,
/// 422 (located at `body.arguments`, the message naming the field) when the tool rejects them.
pub async fn approve_edited(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<ApproveEditedRequest>,
) -> Result<Json<ApproveEditedResponse>> {
    let live = live(&state, &raw).await?;
    let arguments = req.arguments.clone();
    match live
        .handle
        .approve_edited(&req.action_id, req.arguments)
        .await
    {
        Ok(security_risk) => Ok(Json(ApproveEditedResponse {
            success: true,
            security_risk,
        })),
        Err(SdkError::InvalidArguments(message)) => Err(ApiError::field(
            &["body", "arguments"],
            "value_error",
            message.to_string(),
            arguments,
        )),
        Err(e) => Err(e.into()),
    }
}

/// Which stored events a subscriber replays before the live ones.
#[derive(Debug, Clone)]
pub enum Resend {
    /// None.
    None,
    /// All.
    All,
    /// Those at or after this time.
    Since(NaiveDateTime),
}

impl Resend {
    /// From `resend_mode` / `after_timestamp` / the deprecated `resend_all`.
    pub fn from_query(q: &QueryMap) -> Result<Self> {
        if q.bool("resend_all", false)? {
            return Ok(Self::All);
        }
        match q.get("resend_mode") {
            None => Ok(Self::None),
            Some(_) => match q.choice("resend_mode", "all", &["all", "since", "none"])? {
                "all" => Ok(Self::All),
                "since" => match q.get("after_timestamp") {
                    Some(t) => Ok(Self::Since(parse_time(t, "after_timestamp")?)),
                    None => Ok(Self::All),
                },
                _ => Ok(Self::None),
            },
        }
    }
}

/// The outgoing frames of one subscriber: `full_state`, the replay, then live events with a
/// `full_state` after each run ends. Cancel-safe: `next` can be raced in `select!`.
pub struct FrameFeed {
    live: Arc<Live>,
    _guard: WatchGuard,
    queue: VecDeque<Event>,
    rx: broadcast::Receiver<Event>,
    runs: watch::Receiver<RunState>,
    runs_seen: u64,
}

impl FrameFeed {
    /// Subscribes to `live` without gap or duplicate.
    pub fn new(live: Arc<Live>, resend: &Resend) -> Self {
        let guard = live.watch();
        let runs = live.handle.run_state();
        let runs_seen = runs.borrow().runs_ended;
        let (events, rx) = live.handle.subscribe();
        let mut queue = VecDeque::new();
        queue.push_back(full_state_event(&live.handle.state(), live.has_key));
        match resend {
            Resend::None => {}
            Resend::All => queue.extend(events),
            Resend::Since(t) => queue.extend(
                events
                    .into_iter()
                    .filter(|e| event_time(e).is_some_and(|x| x >= *t)),
            ),
        }
        Self {
            live,
            _guard: guard,
            queue,
            rx,
            runs,
            runs_seen,
        }
    }

    /// The conversation.
    pub fn live(&self) -> &Arc<Live> {
        &self.live
    }

    /// The next frame; `None` when the conversation closed.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            tokio::select! {
                biased;
                r = self.rx.recv() => match r {
                    Ok(e) => return Some(e),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(conversation = %self.live.handle.id(), "a subscriber fell {n} events behind");
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                changed = self.runs.changed() => {
                    if changed.is_err() {
                        // The actor ended; deliver what is left, then stop.
                        while let Ok(e) = self.rx.try_recv() {
                            self.queue.push_back(e);
                        }
                        if self.queue.is_empty() {
                            return None;
                        }
                        continue;
                    }
                    let ended = self.runs.borrow_and_update().runs_ended;
                    if ended > self.runs_seen {
                        self.runs_seen = ended;
                        // Events the run emitted before it ended come first.
                        while let Ok(e) = self.rx.try_recv() {
                            self.queue.push_back(e);
                        }
                        self.queue.push_back(full_state_event(&self.live.handle.state(), self.live.has_key));
                    }
                }
            }
        }
    }
}

/// `GET .../events/stream` (Tandem): the WebSocket's frames as Server-Sent Events.
pub async fn stream(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    q: QueryMap,
) -> Result<Sse<impl futures::Stream<Item = std::result::Result<SseEvent, Infallible>>>> {
    let resend = Resend::from_query(&q)?;
    let live = live(&state, &raw).await?;
    let feed = FrameFeed::new(live, &resend);
    let stream = futures::stream::unfold(feed, |mut feed| async move {
        let e = feed.next().await?;
        let data = serde_json::to_string(&e).unwrap_or_default();
        Some((Ok(SseEvent::default().data(data)), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
