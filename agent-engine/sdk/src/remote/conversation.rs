//! A conversation that lives on an agent server, driven over REST with a live event stream:
//! the same operations as a local [`ConversationHandle`](crate::ConversationHandle), with the
//! same arguments, and both behind [`ConversationClient`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tandem_protocol::{
    AgentSpec, ConfirmationPolicy, ConversationState, Event, ExecutionStatus, Extra, Message,
    SecurityRisk,
};
use tokio::sync::{broadcast, watch};

use super::error::{RemoteError, RemoteResult};
use super::http::ServerClient;
use super::stream::{self, LiveState, Shared};
use crate::conversation::ConversationClient;
use crate::error::{Result, SdkError};
use crate::secrets::SecretSource;

/// A REST status poll this often backs up the socket while waiting for a run to end.
const POLL_EVERY: Duration = Duration::from_secs(1);
/// With the socket up, a REST status is trusted only after this long without the post-run
/// snapshot (as the official client does).
const TRUST_REST_AFTER: Duration = Duration::from_secs(30);

/// How to create a conversation on a server (upstream `StartConversationRequest`).
#[derive(Debug, Clone)]
pub struct RemoteConversationOptions {
    /// The agent, LLM key included (the server needs it to call the model).
    pub agent: AgentSpec,
    /// The working directory on the server; the workspace's when `None`.
    pub working_dir: Option<String>,
    /// When actions wait for approval.
    pub confirmation_policy: ConfirmationPolicy,
    /// Steps per run before it stops.
    pub max_iterations: u32,
    /// Whether stuck loops are stopped.
    pub stuck_detection: bool,
    /// Secrets by name (static values).
    pub secrets: BTreeMap<String, String>,
    /// A first user message, and whether the run starts with it.
    pub initial_message: Option<(String, bool)>,
    /// A chosen id (dashed UUID); the server picks one when `None`. Creating with an id that
    /// exists attaches to it.
    pub conversation_id: Option<String>,
    /// Free-form tags.
    pub tags: BTreeMap<String, String>,
    /// Other request fields, sent as given.
    pub extra: Extra,
}

impl RemoteConversationOptions {
    /// Options with upstream's defaults: never confirm, 500 iterations, stuck detection on.
    pub fn new(agent: AgentSpec) -> Self {
        Self {
            agent,
            working_dir: None,
            confirmation_policy: ConfirmationPolicy::NeverConfirm,
            max_iterations: 500,
            stuck_detection: true,
            secrets: BTreeMap::new(),
            initial_message: None,
            conversation_id: None,
            tags: BTreeMap::new(),
            extra: Extra::new(),
        }
    }

    /// The request body.
    pub(super) fn to_request(&self, default_dir: &str) -> RemoteResult<Value> {
        let mut body = Extra::new();
        let agent = serde_json::to_value(&self.agent).map_err(|e| RemoteError::Decode {
            what: "the agent".into(),
            detail: e.to_string(),
        })?;
        body.insert("agent".into(), agent);
        let dir = self
            .working_dir
            .clone()
            .unwrap_or_else(|| default_dir.to_owned());
        body.insert(
            "workspace".into(),
            json!({"kind": "LocalWorkspace", "working_dir": dir}),
        );
        body.insert(
            "confirmation_policy".into(),
            policy_json(&self.confirmation_policy)?,
        );
        body.insert("max_iterations".into(), json!(self.max_iterations));
        body.insert("stuck_detection".into(), json!(self.stuck_detection));
        if !self.secrets.is_empty() {
            body.insert("secrets".into(), json!(self.secrets));
        }
        if let Some((text, run)) = &self.initial_message {
            body.insert(
                "initial_message".into(),
                message_json(&Message::user(text.clone()), *run)?,
            );
        }
        if let Some(id) = &self.conversation_id {
            body.insert("conversation_id".into(), json!(id));
        }
        if !self.tags.is_empty() {
            body.insert("tags".into(), json!(self.tags));
        }
        for (k, v) in &self.extra {
            body.insert(k.clone(), v.clone());
        }
        Ok(Value::Object(body))
    }
}

/// A conversation on an agent server. Cheap to clone; the live stream stops when the last
/// clone is dropped or [`close`](Self::close) is called. The server-side conversation stays
/// until [`delete`](Self::delete).
#[derive(Clone)]
pub struct RemoteConversation {
    shared: Arc<Shared>,
    _stop: Arc<StopOnDrop>,
}

struct StopOnDrop(tokio_util::sync::CancellationToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl std::fmt::Debug for RemoteConversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteConversation")
            .field("id", &self.shared.id)
            .field("server", &self.shared.client.base_url())
            .finish()
    }
}

impl RemoteConversation {
    /// Creates a conversation (`POST /api/conversations`) and opens its live stream.
    pub async fn create(
        client: &ServerClient,
        options: &RemoteConversationOptions,
        default_dir: &str,
    ) -> RemoteResult<Self> {
        let body = options.to_request(default_dir)?;
        let info: Value = client
            .call_json(Method::POST, "/api/conversations", Some(&body))
            .await?;
        let id = info
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| RemoteError::Decode {
                what: "POST /api/conversations".into(),
                detail: "no `id` in the answer".into(),
            })?;
        Self::open(client, id, status_of(&info)).await
    }

    /// Attaches to an existing conversation (404 → [`RemoteError::NotFound`]).
    pub async fn attach(client: &ServerClient, id: &str) -> RemoteResult<Self> {
        let info: Value = client
            .get_json(&format!("/api/conversations/{id}"), &[])
            .await?;
        let id = info
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or(id)
            .to_owned();
        Self::open(client, &id, status_of(&info)).await
    }

    async fn open(client: &ServerClient, id: &str, status: ExecutionStatus) -> RemoteResult<Self> {
        let shared = Shared::new(id.to_owned(), client.clone(), status);
        let stop = Arc::new(StopOnDrop(shared.cancel.clone()));
        stream::start(shared.clone()).await?;
        Ok(Self {
            shared,
            _stop: stop,
        })
    }

    /// The conversation id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The server client.
    pub fn client(&self) -> &ServerClient {
        &self.shared.client
    }

    fn path(&self, rest: &str) -> String {
        format!("/api/conversations/{}{rest}", self.shared.id)
    }

    /// The execution status as the live stream last saw it.
    pub fn status(&self) -> ExecutionStatus {
        self.shared.live.borrow().status
    }

    /// Watches the live state: status, connection, runs ended.
    pub fn live(&self) -> watch::Receiver<LiveState> {
        self.shared.live.subscribe()
    }

    /// A copy of every event seen (persisted ones only, in log order, each once).
    pub fn events(&self) -> Vec<Event> {
        self.shared.events()
    }

    /// Every event so far and a receiver of every later one (transient frames included), with
    /// no gap and no duplicate.
    pub fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        self.shared.subscribe()
    }

    /// The last `full_state` snapshot the server sent (`ConversationState` JSON).
    pub fn last_snapshot(&self) -> Option<Value> {
        self.shared.last_state()
    }

    /// Drops the live socket and reconnects, catching up through REST (for flaky networks,
    /// and to test that nothing is lost or doubled).
    pub fn reconnect(&self) {
        self.shared.force_reconnect();
    }

    /// Fetches events the stream may not have delivered yet. Returns how many were new.
    pub async fn sync_events(&self) -> RemoteResult<usize> {
        self.shared.catch_up().await
    }

    /// `GET /api/conversations/{id}`: the server's `ConversationInfo`.
    pub async fn info(&self) -> RemoteResult<Value> {
        self.shared.client.get_json(&self.path(""), &[]).await
    }

    /// The conversation state, read from the server's `ConversationInfo`.
    pub async fn state(&self) -> RemoteResult<ConversationState> {
        let info = self.info().await?;
        serde_json::from_value(info).map_err(|e| RemoteError::Decode {
            what: "the conversation state".into(),
            detail: e.to_string(),
        })
    }

    /// The status as the server reports it now (REST).
    pub async fn fetch_status(&self) -> RemoteResult<ExecutionStatus> {
        Ok(status_of(&self.info().await?))
    }

    /// Appends a user message; with `run`, the server starts the loop if it is idle.
    pub async fn send_message(&self, message: Message, run: bool) -> RemoteResult<()> {
        let body = message_json(&message, run)?;
        self.shared
            .client
            .post(&self.path("/events"), Some(&body))
            .await
    }

    /// Starts the run loop without waiting for it (`POST /run`), approving the actions that
    /// wait; a server answers 409 ([`RemoteError::Conflict`]) while a run is in progress, and a
    /// Tandem server also when there is nothing to run or the conversation is broken (its
    /// `code` tells which).
    pub async fn run(&self) -> RemoteResult<()> {
        self.shared.client.post(&self.path("/run"), None).await
    }

    /// Waits for the run that started after `before` (see [`live`](Self::live)) to end and
    /// returns the status it stopped in (`finished`, `paused`, `waiting_for_confirmation`,
    /// `error`, ...). Completion is the server's post-run `full_state` frame, or a field-level
    /// `error`/`stuck` status, with a REST poll behind them; the events are reconciled through
    /// REST after.
    pub async fn wait_for_run_end(&self, before: &LiveState) -> RemoteResult<ExecutionStatus> {
        let mut rx = self.shared.live.subscribe();
        let started = Instant::now();
        let mut poll = tokio::time::interval(POLL_EVERY);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        poll.tick().await;
        let mut seen_running = false;
        let status = loop {
            {
                let l = rx.borrow_and_update();
                seen_running |= l.status == ExecutionStatus::Running;
                if l.runs_ended > before.runs_ended && l.status != ExecutionStatus::Running {
                    break l.status;
                }
                if l.status_updates > before.status_updates
                    && matches!(l.status, ExecutionStatus::Error | ExecutionStatus::Stuck)
                {
                    break l.status;
                }
                let settled = !matches!(l.status, ExecutionStatus::Running | ExecutionStatus::Idle);
                if l.connections > before.connections && l.connected && settled && seen_running {
                    break l.status;
                }
                if let Some(f) = &l.fatal {
                    return Err(RemoteError::Stream(f.clone()));
                }
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return Err(RemoteError::Closed) },
                _ = poll.tick() => {
                    let rest = self.fetch_status().await?;
                    seen_running |= rest == ExecutionStatus::Running;
                    let connected = self.shared.live.borrow().connected;
                    let trusted = if connected { started.elapsed() >= TRUST_REST_AFTER } else { seen_running || started.elapsed() >= Duration::from_secs(3) };
                    if rest != ExecutionStatus::Running && trusted {
                        self.shared.live.send_modify(|l| l.status = rest);
                        break rest;
                    }
                }
            }
        };
        self.sync_events().await?;
        Ok(status)
    }

    /// Pauses: the in-flight step finishes, then the loop stops.
    pub async fn pause(&self) -> RemoteResult<()> {
        self.shared.client.post(&self.path("/pause"), None).await
    }

    /// Interrupts: cancels the in-flight LLM call or tool now.
    pub async fn interrupt(&self) -> RemoteResult<()> {
        self.shared
            .client
            .post(&self.path("/interrupt"), None)
            .await
    }

    /// Approves (the pending actions run) or rejects them with a reason the model reads.
    pub async fn respond_to_confirmation(
        &self,
        accept: bool,
        reason: Option<String>,
    ) -> RemoteResult<()> {
        let mut body = json!({"accept": accept});
        if let Some(r) = reason {
            body["reason"] = json!(r);
        }
        self.shared
            .client
            .post(&self.path("/events/respond_to_confirmation"), Some(&body))
            .await
    }

    /// Runs the pending action `action_id` with the person's `arguments` instead of the agent's,
    /// which starts a run, and returns the edited action's risk as the server rates it (Tandem
    /// servers; an upstream server has no such route and answers 404).
    pub async fn approve_edited(
        &self,
        action_id: &str,
        arguments: Value,
    ) -> RemoteResult<SecurityRisk> {
        let body = json!({"action_id": action_id, "arguments": arguments});
        let resp: Value = self
            .shared
            .client
            .call_json(
                Method::POST,
                &self.path("/events/approve_edited"),
                Some(&body),
            )
            .await?;
        // `ApproveEditedResponse`; a server that leaves the risk out has not rated it.
        Ok(resp
            .get("security_risk")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default())
    }

    /// Changes the confirmation policy.
    pub async fn set_confirmation_policy(&self, policy: ConfirmationPolicy) -> RemoteResult<()> {
        let body = json!({"policy": policy_json(&policy)?});
        self.shared
            .client
            .post(&self.path("/confirmation_policy"), Some(&body))
            .await
    }

    /// Sets (or clears) the security analyzer (`{"kind": "LLMSecurityAnalyzer"}`, ...).
    pub async fn set_security_analyzer(&self, analyzer: Option<Value>) -> RemoteResult<()> {
        let body = json!({"security_analyzer": analyzer});
        self.shared
            .client
            .post(&self.path("/security_analyzer"), Some(&body))
            .await
    }

    /// Adds or replaces secrets (sent in upstream's shapes: a static value as a plain string, or
    /// `StaticSecret` / `LookupSecret` objects).
    pub async fn update_secrets(&self, secrets: Vec<(String, SecretSource)>) -> RemoteResult<()> {
        let secrets: serde_json::Map<String, Value> = secrets
            .into_iter()
            .map(|(name, source)| (name, source.into_json()))
            .collect();
        let body = json!({"secrets": secrets});
        self.shared
            .client
            .post(&self.path("/secrets"), Some(&body))
            .await
    }

    /// Asks the agent a side question without changing the conversation; returns its answer.
    pub async fn ask_agent(&self, question: &str) -> RemoteResult<String> {
        let body = json!({"question": question});
        let resp: Value = self
            .shared
            .client
            .call_json(Method::POST, &self.path("/ask_agent"), Some(&body))
            .await?;
        resp.get("response")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| RemoteError::Decode {
                what: "ask_agent".into(),
                detail: format!("no `response` in {resp}"),
            })
    }

    /// Asks the server to condense the history.
    pub async fn condense(&self) -> RemoteResult<()> {
        self.shared.client.post(&self.path("/condense"), None).await
    }

    /// Sets the title.
    pub async fn set_title(&self, title: String) -> RemoteResult<()> {
        let body = json!({"title": title});
        let _: Value = self
            .shared
            .client
            .call_json(Method::PATCH, &self.path(""), Some(&body))
            .await?;
        Ok(())
    }

    /// The agent's final answer (its finish message or last text).
    pub async fn agent_final_response(&self) -> RemoteResult<String> {
        let resp: Value = self
            .shared
            .client
            .get_json(&self.path("/agent_final_response"), &[])
            .await?;
        Ok(resp
            .get("response")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned())
    }

    /// Deletes the conversation on the server and stops the stream.
    pub async fn delete(&self) -> RemoteResult<()> {
        self.shared.cancel.cancel();
        let _: Value = self
            .shared
            .client
            .call_json(Method::DELETE, &self.path(""), None)
            .await?;
        Ok(())
    }

    /// Stops the live stream; the conversation stays on the server. (Async and fallible, as a
    /// local conversation's `close` is, though it neither waits nor fails.)
    pub async fn close(&self) -> RemoteResult<()> {
        self.shared.cancel.cancel();
        Ok(())
    }
}

/// `execution_status` of a `ConversationInfo` (idle when absent or unknown).
fn status_of(info: &Value) -> ExecutionStatus {
    info.get("execution_status")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

fn policy_json(policy: &ConfirmationPolicy) -> RemoteResult<Value> {
    serde_json::to_value(policy).map_err(|e| RemoteError::Decode {
        what: "the confirmation policy".into(),
        detail: e.to_string(),
    })
}

/// A `SendMessageRequest`: the message plus `run`.
fn message_json(message: &Message, run: bool) -> RemoteResult<Value> {
    let mut v = serde_json::to_value(message).map_err(|e| RemoteError::Decode {
        what: "the message".into(),
        detail: e.to_string(),
    })?;
    if let Value::Object(o) = &mut v {
        o.insert("run".into(), json!(run));
    }
    Ok(v)
}

impl ConversationClient for RemoteConversation {
    type RunMark = LiveState;

    fn id(&self) -> &str {
        RemoteConversation::id(self)
    }

    fn status(&self) -> ExecutionStatus {
        RemoteConversation::status(self)
    }

    fn events(&self) -> Vec<Event> {
        RemoteConversation::events(self)
    }

    fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        RemoteConversation::subscribe(self)
    }

    fn run_mark(&self) -> LiveState {
        self.shared.live.borrow().clone()
    }

    async fn wait_for_run_end(&self, since: &LiveState) -> Result<ExecutionStatus> {
        Ok(RemoteConversation::wait_for_run_end(self, since).await?)
    }

    async fn send_message(&self, message: Message, run: bool) -> Result<()> {
        Ok(RemoteConversation::send_message(self, message, run).await?)
    }

    async fn run(&self) -> Result<()> {
        match RemoteConversation::run(self).await {
            // A 409 is a run in progress or, on a Tandem server, a run that cannot start
            // (nothing to run, a broken conversation): the errors a local conversation gives.
            // Upstream's only 409 on run, without a code, is a run in progress.
            Err(RemoteError::Conflict { detail, code }) => Err(match code.as_deref() {
                None | Some("already_running") => SdkError::AlreadyRunning,
                Some(_) => SdkError::InvalidState(detail),
            }),
            other => Ok(other?),
        }
    }

    async fn pause(&self) -> Result<()> {
        Ok(RemoteConversation::pause(self).await?)
    }

    async fn interrupt(&self) -> Result<()> {
        Ok(RemoteConversation::interrupt(self).await?)
    }

    async fn respond_to_confirmation(&self, accept: bool, reason: Option<String>) -> Result<()> {
        Ok(RemoteConversation::respond_to_confirmation(self, accept, reason).await?)
    }

    async fn approve_edited(&self, action_id: &str, arguments: Value) -> Result<SecurityRisk> {
        Ok(RemoteConversation::approve_edited(self, action_id, arguments).await?)
    }

    async fn set_confirmation_policy(&self, policy: ConfirmationPolicy) -> Result<()> {
        Ok(RemoteConversation::set_confirmation_policy(self, policy).await?)
    }

    async fn set_security_analyzer(&self, analyzer: Option<Value>) -> Result<()> {
        Ok(RemoteConversation::set_security_analyzer(self, analyzer).await?)
    }

    async fn update_secrets(&self, secrets: Vec<(String, SecretSource)>) -> Result<()> {
        Ok(RemoteConversation::update_secrets(self, secrets).await?)
    }

    async fn condense(&self) -> Result<()> {
        Ok(RemoteConversation::condense(self).await?)
    }

    async fn set_title(&self, title: String) -> Result<()> {
        Ok(RemoteConversation::set_title(self, title).await?)
    }

    async fn close(&self) -> Result<()> {
        Ok(RemoteConversation::close(self).await?)
    }
}
