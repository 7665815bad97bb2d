//! The tool catalog: tools made by name and params from an agent spec.
//!
//! An agent spec names its tools as plain JSON (`{"name": "grep", "params": {}}`), so a spec
//! written on one machine means the same on a server elsewhere. A [`ToolCatalog`] maps those
//! names to factories; the host (server, CLI, desktop) resolves a spec's entries through it.
//! Objects a tool must share with its host (the terminal the PTY socket attaches to, the browser
//! the live view shows, the launcher of sub-conversations) travel in the [`ToolEnv`] as typed
//! services, so factories stay free of host types.
//!
//! Tools a spec brings by a field of its own rather than by a `tools` entry (the servers of its
//! `mcp_config`) come from a *source* registered under that field's name, so the MCP client plugs
//! in the way the browser does: a host registers it, and a host that did not refuses such a spec
//! by name instead of dropping its tools.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use tandem_llm::Llm;
use tandem_protocol::Extra;

use super::Tool;

/// What a factory may use when it makes one conversation's tools.
#[derive(Clone)]
pub struct ToolEnv {
    /// The conversation's workspace.
    pub working_dir: PathBuf,
    /// The conversation's id (dashed), or empty before one exists.
    pub conversation_id: String,
    /// The conversation's directory, when persisted.
    pub conversation_dir: Option<PathBuf>,
    /// The conversation's LLM (sub-agents inherit it).
    pub llm: Option<Arc<dyn Llm>>,
    services: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for ToolEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEnv")
            .field("working_dir", &self.working_dir)
            .field("conversation_id", &self.conversation_id)
            .field("services", &self.services.len())
            .finish_non_exhaustive()
    }
}

impl ToolEnv {
    /// An environment for tools working in `working_dir`, with no services.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Self {
            working_dir: working_dir.into(),
            conversation_id: String::new(),
            conversation_dir: None,
            llm: None,
            services: HashMap::new(),
        }
    }

    /// Adds a host service of type `T` (replacing an earlier one of the same type).
    pub fn with<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.services.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// The host service of type `T`, if the host gave one.
    pub fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.services
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
            .cloned()
    }
}

/// What a factory answers: the tools it made, or why it could not (shown to whoever sent the
/// spec).
pub type MadeTools = Result<Vec<Arc<dyn Tool>>, MakeToolError>;

/// Why a factory or a source made no tools; the text names what was missing or refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MakeToolError {
    /// The tools need something this host or conversation lacks (the browser's profile folder).
    #[error("{0}")]
    Unavailable(String),
    /// The spec's configuration of the tools is refused (an `mcp_config` the MCP client cannot
    /// use, a sub-agent's spec that does not resolve).
    #[error("{0}")]
    Config(String),
}

type Factory = dyn Fn(Extra, ToolEnv) -> BoxFuture<'static, MadeTools> + Send + Sync;

type Source = dyn Fn(serde_json::Value, ToolEnv) -> BoxFuture<'static, MadeTools> + Send + Sync;

struct Entry {
    names: Vec<String>,
    make: Arc<Factory>,
}

/// Tool factories by spec name, and tool sources by spec field. Cloning shares them.
#[derive(Clone, Default)]
pub struct ToolCatalog {
    entries: Vec<Arc<Entry>>,
    sources: HashMap<String, Arc<Source>>,
}

impl std::fmt::Debug for ToolCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolCatalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a factory under `names`: the first is the canonical spec name, the rest are
    /// aliases (upstream's class names, `GrepTool`). A factory may make several tools (a tool
    /// set). A later registration of a name replaces the earlier one, so a host can swap a
    /// built-in for its own.
    pub fn register<F>(&mut self, names: &[&str], make: F)
    where
        F: Fn(Extra, ToolEnv) -> BoxFuture<'static, MadeTools> + Send + Sync + 'static,
    {
        for name in names {
            self.remove(name);
        }
        self.entries.push(Arc::new(Entry {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            make: Arc::new(make),
        }));
    }

    /// Registers a factory that makes one tool without waiting on anything.
    pub fn register_tool<F>(&mut self, names: &[&str], make: F)
    where
        F: Fn(&Extra, &ToolEnv) -> Result<Arc<dyn Tool>, MakeToolError> + Send + Sync + 'static,
    {
        self.register(names, move |params, env| {
            let made = make(&params, &env).map(|t| vec![t]);
            Box::pin(std::future::ready(made))
        });
    }

    /// Registers the source of the tools an agent spec's `field` (e.g. `mcp_config`) brings: it
    /// gets the field's value when the spec has one. A later registration replaces the earlier.
    pub fn register_source<F>(&mut self, field: &str, make: F)
    where
        F: Fn(serde_json::Value, ToolEnv) -> BoxFuture<'static, MadeTools> + Send + Sync + 'static,
    {
        self.sources.insert(field.to_owned(), Arc::new(make));
    }

    /// Makes the tools the spec field `field` with value `value` brings; `None` when no source
    /// is registered for that field.
    pub async fn make_from_field(
        &self,
        field: &str,
        value: serde_json::Value,
        env: ToolEnv,
    ) -> Option<MadeTools> {
        let make = Arc::clone(self.sources.get(field)?);
        Some(make(value, env).await)
    }

    /// The canonical names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter_map(|e| e.names.first().map(String::as_str))
            .collect()
    }

    /// Whether `name` (canonical or alias) is registered.
    pub fn knows(&self, name: &str) -> bool {
        self.entry(name).is_some()
    }

    /// The canonical name of `name` (itself when canonical or unknown).
    pub fn canonical<'a>(&'a self, name: &'a str) -> &'a str {
        self.entry(name)
            .and_then(|e| e.names.first())
            .map_or(name, String::as_str)
    }

    /// Makes the tools `name` stands for; `None` when no factory has that name.
    pub async fn make(&self, name: &str, params: Extra, env: ToolEnv) -> Option<MadeTools> {
        let make = Arc::clone(&self.entry(name)?.make);
        Some(make(params, env).await)
    }

    fn entry(&self, name: &str) -> Option<&Arc<Entry>> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.names.iter().any(|n| n == name))
    }

    fn remove(&mut self, name: &str) {
        for e in &mut self.entries {
            if e.names.iter().any(|n| n == name) {
                let mut names = e.names.clone();
                names.retain(|n| n != name);
                *e = Arc::new(Entry {
                    names,
                    make: Arc::clone(&e.make),
                });
            }
        }
        self.entries.retain(|e| !e.names.is_empty());
    }
}
