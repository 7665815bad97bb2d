//! One configured MCP server for the life of a conversation: connected at start-up, restarted
//! when it died, every call bounded by a timeout, closed (process group killed) at the end.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::ServerConfig;
use crate::connection::{self, McpCallResult, McpConnection, McpToolInfo};
use crate::{McpError, McpErrorKind, McpOptions};

/// A configured server and its current connection.
pub struct McpServer {
    config: ServerConfig,
    cwd: Option<PathBuf>,
    init_timeout: Duration,
    call_timeout: Duration,
    conn: Mutex<Option<Arc<dyn McpConnection>>>,
    /// Held while (re)connecting, so concurrent calls do not start two processes.
    restarting: tokio::sync::Mutex<()>,
    closed: AtomicBool,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Connects to `config` and lists its tools, all within the initialize timeout.
    pub async fn start(
        config: ServerConfig,
        options: &McpOptions,
    ) -> Result<(Arc<Self>, Vec<McpToolInfo>), McpError> {
        let init_timeout = options.init_timeout;
        let conn =
            connection::connect(&config, options.working_dir.as_deref(), init_timeout).await?;
        let tools = match tokio::time::timeout(init_timeout, conn.list_tools()).await {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                conn.close();
                return Err(e);
            }
            Err(_) => {
                conn.close();
                return Err(McpError::timeout(
                    &config.name,
                    "listing its tools",
                    init_timeout,
                ));
            }
        };
        let server = Arc::new(Self {
            call_timeout: config.call_timeout.unwrap_or(options.call_timeout),
            cwd: options.working_dir.clone(),
            init_timeout,
            config,
            conn: Mutex::new(Some(conn)),
            restarting: tokio::sync::Mutex::new(()),
            closed: AtomicBool::new(false),
        });
        Ok((server, tools))
    }

    /// The server's name in the config.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    fn current(&self) -> Option<Arc<dyn McpConnection>> {
        match self.conn.lock() {
            Ok(c) => c.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn set(&self, conn: Option<Arc<dyn McpConnection>>) -> Option<Arc<dyn McpConnection>> {
        let mut slot = match self.conn.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        std::mem::replace(&mut *slot, conn)
    }

    /// A live connection: the current one, or a new one when it died.
    async fn live(&self) -> Result<Arc<dyn McpConnection>, McpError> {
        if let Some(c) = self.current().filter(|c| !c.is_closed()) {
            return Ok(c);
        }
        let _one = self.restarting.lock().await;
        if self.closed.load(Ordering::SeqCst) {
            return Err(McpError::new(
                self.name(),
                McpErrorKind::Connection,
                "it was closed with its conversation",
            ));
        }
        if let Some(c) = self.current().filter(|c| !c.is_closed()) {
            return Ok(c);
        }
        if let Some(old) = self.set(None) {
            old.close();
        }
        tracing::info!(server = %self.name(), "restarting MCP server");
        let conn = connection::connect(&self.config, self.cwd.as_deref(), self.init_timeout)
            .await
            .map_err(|e| {
                McpError::new(
                    self.name(),
                    e.kind,
                    format!("it stopped and restarting it failed: {}", e.message),
                )
            })?;
        if self.closed.load(Ordering::SeqCst) {
            conn.close();
            return Err(McpError::new(
                self.name(),
                McpErrorKind::Connection,
                "it was closed with its conversation",
            ));
        }
        self.set(Some(conn.clone()));
        Ok(conn)
    }

    /// Calls `tool` (its name on the server). A dead server is restarted first; a server that
    /// dies during the call is restarted for the next one and the call reports the failure
    /// (it may have had effects, so it is not repeated); a call that outlasts the per-call
    /// timeout is abandoned with a timeout error.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpCallResult, McpError> {
        let conn = self.live().await?;
        let what = format!("the call of `{tool}`");
        match tokio::time::timeout(
            self.call_timeout,
            conn.call_tool(tool.to_owned(), arguments),
        )
        .await
        {
            Err(_) => Err(McpError::timeout(self.name(), &what, self.call_timeout)),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) if e.is_fatal() || conn.is_closed() => {
                let note = match self.live().await {
                    Ok(_) => {
                        "; the server was restarted, so the call may be tried again".to_owned()
                    }
                    Err(r) => format!("; {}", r.message),
                };
                Err(McpError::new(
                    self.name(),
                    e.kind,
                    format!("{}{note}", e.message),
                ))
            }
            Ok(Err(e)) => Err(e),
        }
    }

    /// Closes the connection and kills the server's process group; later calls fail.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(c) = self.set(None) {
            c.close();
        }
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        self.close();
    }
}
