//! One live connection to an MCP server, behind [`McpConnection`] so that the MCP library
//! (rmcp, whose majors come every few months) stays inside this module.
//!
//! Every transport ends as a pair of channels of JSON-RPC messages handed to rmcp's client:
//! stdio ([`stdio`]) reads the child's stdout itself, so a line that is not JSON-RPC closes the
//! connection with an error naming the server instead of being skipped until a timeout;
//! legacy SSE ([`sse`]) is written here since rmcp dropped it; streamable HTTP ([`http`]) is
//! rmcp's own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::BoxFuture;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Map, Value};

use crate::config::{ServerConfig, Transport};
use crate::{McpError, McpErrorKind};

mod http;
mod sse;
mod stdio;

/// A tool as its server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// Its name on the server.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    pub input_schema: Value,
    /// The MCP annotations (`readOnlyHint`, …), as sent.
    pub annotations: Option<Value>,
}

/// A tool call's result, as the server sent it (`content` blocks in MCP's shapes).
#[derive(Debug, Clone, PartialEq)]
pub struct McpCallResult {
    /// MCP content blocks (`{"type": "text", ...}`, `{"type": "image", ...}`, …).
    pub content: Vec<Value>,
    /// `structuredContent`, when sent.
    pub structured: Option<Value>,
    /// The server's `isError`.
    pub is_error: bool,
}

/// A live connection to one MCP server.
pub trait McpConnection: Send + Sync {
    /// Every tool (all pages).
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<McpToolInfo>, McpError>>;
    /// Calls `name` with `arguments`.
    fn call_tool(
        &self,
        name: String,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'_, Result<McpCallResult, McpError>>;
    /// Whether the connection is gone (the server exited or closed it).
    fn is_closed(&self) -> bool;
    /// Ends the connection now and kills the server's process group, if it has one (without
    /// waiting: it runs when a conversation closes, from synchronous code). Idempotent.
    fn close(&self);
}

/// Opens a connection to `server` (the MCP handshake included), within `timeout`.
pub async fn connect(
    server: &ServerConfig,
    default_cwd: Option<&std::path::Path>,
    timeout: Duration,
) -> Result<Arc<dyn McpConnection>, McpError> {
    let name = server.name.as_str();
    let fut = async {
        let conn: Arc<dyn McpConnection> = match &server.transport {
            Transport::Stdio { .. } => Arc::new(stdio::connect(server, default_cwd).await?),
            Transport::Sse { url, headers } => Arc::new(sse::connect(name, url, headers).await?),
            Transport::Http { url, headers } => Arc::new(http::connect(name, url, headers).await?),
        };
        Ok::<_, McpError>(conn)
    };
    // A dropped future drops the half-made connection, which kills a started process.
    match tokio::time::timeout(timeout, fut).await {
        Ok(r) => r,
        Err(_) => Err(McpError::timeout(
            name,
            "starting and initializing",
            timeout,
        )),
    }
}

/// What a transport knows about why it ended, to explain a failed call.
#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    /// The first line that was not JSON-RPC.
    pub protocol_error: Option<String>,
    /// Why the transport ended (exit status, HTTP error).
    pub ended: Option<String>,
    /// The last lines the server wrote to stderr.
    pub stderr: std::collections::VecDeque<String>,
}

pub(crate) type SharedDiagnostics = Arc<Mutex<Diagnostics>>;

impl Diagnostics {
    /// Turns a failure of the rmcp service into our error, with what the transport saw.
    fn explain(diag: &SharedDiagnostics, server: &str, what: &str, detail: String) -> McpError {
        let d = match diag.lock() {
            Ok(d) => d,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(p) = &d.protocol_error {
            return McpError::new(
                server,
                McpErrorKind::Protocol,
                format!("sent malformed JSON-RPC during {what}: {p}"),
            );
        }
        let mut message = match &d.ended {
            Some(e) => format!("{what} failed: {e}"),
            None => format!("{what} failed: {detail}"),
        };
        if !d.stderr.is_empty() {
            let tail: Vec<&str> = d.stderr.iter().map(String::as_str).collect();
            message.push_str(&format!("; its stderr ends with: {}", tail.join(" | ")));
        }
        McpError::new(server, McpErrorKind::Connection, message)
    }

    fn lock(diag: &SharedDiagnostics) -> std::sync::MutexGuard<'_, Diagnostics> {
        match diag.lock() {
            Ok(d) => d,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

type Tx = TxJsonRpcMessage<RoleClient>;
type Rx = RxJsonRpcMessage<RoleClient>;

/// The channel ends a transport task works with: messages to send, and where to put received
/// ones.
pub(crate) struct Wire {
    pub outgoing: mpsc::Receiver<Tx>,
    pub incoming: mpsc::Sender<Rx>,
}

/// rmcp's client over a [`Wire`], plus whatever must live as long as the connection (a child
/// process's guard).
pub(crate) struct RmcpConnection {
    server: String,
    service: Mutex<Option<RunningService<RoleClient, ()>>>,
    peer: rmcp::Peer<RoleClient>,
    diag: SharedDiagnostics,
    closed: std::sync::atomic::AtomicBool,
    /// Dropped when the connection closes: a child process's group guard.
    guard: Mutex<Option<Box<dyn Send>>>,
}

impl RmcpConnection {
    /// Starts rmcp's client on a new wire whose other ends `spawn_transport` serves. `guard` is
    /// dropped when the connection is closed or dropped, or when starting fails or is abandoned.
    pub(crate) async fn start(
        server: &str,
        diag: SharedDiagnostics,
        spawn_transport: impl FnOnce(Wire),
        guard: Option<Box<dyn Send>>,
    ) -> Result<Self, McpError> {
        let (tx_out, rx_out) = mpsc::channel::<Tx>(32);
        let (tx_in, rx_in) = mpsc::channel::<Rx>(32);
        spawn_transport(Wire {
            outgoing: rx_out,
            incoming: tx_in,
        });
        Self::serve(server, diag, (tx_out, rx_in), guard).await
    }

    /// Starts rmcp's client on `transport`.
    pub(crate) async fn serve<T, E, A>(
        server: &str,
        diag: SharedDiagnostics,
        transport: T,
        guard: Option<Box<dyn Send>>,
    ) -> Result<Self, McpError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = match ().serve(transport).await {
            Ok(r) => r,
            Err(e) => {
                drop(guard);
                if let Some(challenge) = e.auth_challenge() {
                    return Err(McpError::new(
                        server,
                        McpErrorKind::Auth,
                        format!(
                            "requires OAuth sign-in ({challenge}), which Tandem cannot do without a browser; give an access token in the server's `auth` (\"auth\": \"<token>\") or `headers`"
                        ),
                    ));
                }
                return Err(Diagnostics::explain(
                    &diag,
                    server,
                    "the MCP handshake",
                    e.to_string(),
                ));
            }
        };
        Ok(Self {
            server: server.to_owned(),
            peer: running.peer().clone(),
            service: Mutex::new(Some(running)),
            diag,
            closed: false.into(),
            guard: Mutex::new(guard),
        })
    }

    fn error(&self, what: &str, e: ServiceError) -> McpError {
        match e {
            ServiceError::McpError(data) => McpError::new(
                &self.server,
                McpErrorKind::Rpc,
                format!(
                    "{what} failed: {} (JSON-RPC error {})",
                    data.message, data.code.0
                ),
            ),
            ServiceError::Timeout { timeout } => McpError::timeout(&self.server, what, timeout),
            other => {
                if let Some(challenge) = other.auth_challenge() {
                    return McpError::new(
                        &self.server,
                        McpErrorKind::Auth,
                        format!(
                            "requires OAuth sign-in ({challenge}); give an access token in the server's `auth` or `headers`"
                        ),
                    );
                }
                Diagnostics::explain(&self.diag, &self.server, what, other.to_string())
            }
        }
    }

    fn shutdown_sync(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let guard = match self.guard.lock() {
            Ok(mut g) => g.take(),
            Err(p) => p.into_inner().take(),
        };
        drop(guard);
    }
}

impl Drop for RmcpConnection {
    fn drop(&mut self) {
        self.shutdown_sync();
    }
}

impl McpConnection for RmcpConnection {
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<McpToolInfo>, McpError>> {
        Box::pin(async move {
            let tools = self
                .peer
                .list_all_tools()
                .await
                .map_err(|e| self.error("tools/list", e))?;
            Ok(tools
                .into_iter()
                .map(|t| McpToolInfo {
                    name: t.name.to_string(),
                    description: t.description.map(|d| d.to_string()),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    annotations: t
                        .annotations
                        .as_ref()
                        .and_then(|a| serde_json::to_value(a).ok()),
                })
                .collect())
        })
    }

    fn call_tool(
        &self,
        name: String,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'_, Result<McpCallResult, McpError>> {
        Box::pin(async move {
            let what = format!("the call of `{name}`");
            let mut params = CallToolRequestParams::new(name);
            params.arguments = Some(arguments);
            let result = self
                .peer
                .call_tool(params)
                .await
                .map_err(|e| self.error(&what, e))?;
            // Through JSON: our shapes stay the MCP wire shapes whatever rmcp's types become.
            let value = serde_json::to_value(&result).unwrap_or(Value::Null);
            Ok(McpCallResult {
                content: value
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                structured: value.get("structuredContent").cloned(),
                is_error: result.is_error.unwrap_or(false),
            })
        })
    }

    fn is_closed(&self) -> bool {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) || self.peer.is_transport_closed()
        {
            return true;
        }
        let d = Diagnostics::lock(&self.diag);
        d.ended.is_some() || d.protocol_error.is_some()
    }

    fn close(&self) {
        let running = match self.service.lock() {
            Ok(mut s) => s.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(running) = running {
            running.cancellation_token().cancel();
        }
        self.shutdown_sync();
    }
}
