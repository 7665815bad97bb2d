//! [`LocalSubAgents`]: children in the parent's [`ConversationStore`], for hosts without a
//! registry of live conversations (the CLI, tests, embedders).

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use tandem_llm::Llm;
use tandem_protocol::{AgentSpec, ConversationState};
use tokio_util::sync::CancellationToken;

use super::{
    PARENT_FIELD, SubAgentType, SubAgents, TaskError, TaskReport, TaskRequest, builtin_subagents,
    child_options, child_title, dashed, run_child,
};
use crate::conversation::{Conversation, ConversationHandle, Runtime};
use crate::persistence::{ConversationMeta, ConversationStore};
use crate::tool::{MadeTools, ToolEnv};

/// Makes a child's tools from its agent spec (the host resolves names through its catalog).
pub type ToolMaker = Arc<dyn Fn(AgentSpec, ToolEnv) -> BoxFuture<'static, MadeTools> + Send + Sync>;

/// Runs each task as a conversation in `store`, on the parent's LLM. A child is closed when
/// its run ends (its shell goes with it) and reopened from disk by `resume`. Nobody watches
/// these children, so actions a child's policy holds for confirmation are rejected.
pub struct LocalSubAgents {
    store: ConversationStore,
    llm: Arc<dyn Llm>,
    make_tools: ToolMaker,
    types: Vec<SubAgentType>,
}

impl std::fmt::Debug for LocalSubAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSubAgents")
            .field("root", &self.store.root())
            .finish_non_exhaustive()
    }
}

impl LocalSubAgents {
    /// Children in `store`, running on `llm`, with tools from `make_tools`; the built-in types.
    pub fn new(store: ConversationStore, llm: Arc<dyn Llm>, make_tools: ToolMaker) -> Self {
        Self {
            store,
            llm,
            make_tools,
            types: builtin_subagents(),
        }
    }

    /// Adds (or replaces, by name) a sub-agent type.
    pub fn with_type(mut self, kind: SubAgentType) -> Self {
        self.types.retain(|t| t.name != kind.name);
        self.types.push(kind);
        self
    }

    async fn tools_for(&self, spec: AgentSpec, id: &str, workspace: &Path) -> MadeTools {
        let mut env = ToolEnv::new(workspace);
        env.conversation_id = id.to_owned();
        env.conversation_dir = self.store.dir_for(id).ok();
        env.llm = Some(Arc::clone(&self.llm));
        (self.make_tools)(spec, env).await
    }

    async fn start_child(&self, request: &TaskRequest) -> Result<ConversationHandle, TaskError> {
        let parent_dir = self
            .store
            .dir_for(&request.parent_id)
            .map_err(|e| TaskError::Parent(e.to_string()))?;
        let parent: ConversationState = read(&parent_dir.join("base_state.json"))
            .map_err(|e| TaskError::Parent(e.to_string()))?;
        let kind = self
            .types
            .iter()
            .find(|t| t.name == request.subagent_type)
            .ok_or_else(|| TaskError::UnknownType(request.subagent_type.clone()))?;
        let mut options = child_options(&parent, kind);
        let id = uuid::Uuid::new_v4().to_string();
        options.id = Some(id.clone());
        let tools = self
            .tools_for(options.agent.clone(), &id, &options.workspace)
            .await
            .map_err(|e| TaskError::Tools(e.to_string()))?;
        let runtime = Runtime {
            llm: Arc::clone(&self.llm),
            tools,
            checkpoints: None,
            run_gate: None,
        };
        let child = Conversation::create(&self.store, options, runtime)
            .await
            .map_err(|e| TaskError::Create(e.to_string()))?;
        let title = child_title(request.description.as_deref(), &request.prompt);
        let _ = child.set_title(title).await;
        Ok(child)
    }

    async fn open_child(
        &self,
        parent_id: &str,
        task_id: &str,
    ) -> Result<ConversationHandle, TaskError> {
        let parent = dashed(parent_id);
        let meta = self
            .store
            .dir_for(task_id)
            .ok()
            .and_then(|d| read::<ConversationMeta>(&d.join("meta.json")).ok())
            .filter(|m| m.extra.get(PARENT_FIELD).and_then(|v| v.as_str()) == Some(&parent));
        if meta.is_none() {
            let tasks: Vec<String> = self
                .store
                .list()
                .into_iter()
                .filter(|m| m.extra.get(PARENT_FIELD).and_then(|v| v.as_str()) == Some(&parent))
                .map(|m| dashed(&m.id))
                .collect();
            return Err(TaskError::NotFound {
                task_id: task_id.to_owned(),
                tasks,
            });
        }
        let reopen = |reason: String| TaskError::Reopen {
            task_id: task_id.to_owned(),
            reason,
        };
        let dir = self
            .store
            .dir_for(task_id)
            .map_err(|e| reopen(e.to_string()))?;
        let state: ConversationState =
            read(&dir.join("base_state.json")).map_err(|e| reopen(e.to_string()))?;
        let workspace = Path::new(&state.workspace.working_dir).to_path_buf();
        let tools = self
            .tools_for(state.agent.clone(), &state.id, &workspace)
            .await
            .map_err(|e| TaskError::Tools(e.to_string()))?;
        let runtime = Runtime {
            llm: Arc::clone(&self.llm),
            tools,
            checkpoints: None,
            run_gate: None,
        };
        let (child, _warnings) = Conversation::open(&self.store, task_id, runtime)
            .await
            .map_err(|e| reopen(e.to_string()))?;
        Ok(child)
    }
}

/// A conversation file that could not be read or parsed, named.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
struct FileError {
    path: std::path::PathBuf,
    reason: String,
}

/// The JSON file at `path`.
fn read<T: DeserializeOwned>(path: &Path) -> Result<T, FileError> {
    let failed = |reason: String| FileError {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| failed(e.to_string()))
}

impl SubAgents for LocalSubAgents {
    fn types(&self) -> Vec<SubAgentType> {
        self.types.clone()
    }

    fn start(&self, request: TaskRequest, cancel: CancellationToken) -> BoxFuture<'_, TaskReport> {
        Box::pin(async move {
            let child = self.start_child(&request).await;
            run(child, request.prompt, cancel).await
        })
    }

    fn resume<'a>(
        &'a self,
        parent_id: &'a str,
        task_id: &'a str,
        prompt: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, TaskReport> {
        Box::pin(async move {
            let child = self.open_child(parent_id, task_id).await;
            run(child, prompt, cancel).await
        })
    }
}

/// Runs the task on `child` (no one here can confirm its actions) and closes it; the refusal
/// when there is no child.
async fn run(
    child: Result<ConversationHandle, TaskError>,
    prompt: String,
    cancel: CancellationToken,
) -> TaskReport {
    let child = match child {
        Ok(c) => c,
        Err(e) => return TaskReport::refused(e),
    };
    let outcome = run_child(&child, prompt, cancel, false).await;
    let _ = child.close().await;
    TaskReport {
        task_id: Some(dashed(child.id())),
        outcome,
    }
}
