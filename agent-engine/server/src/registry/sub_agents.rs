//! Sub-conversations: the server's [`SubAgents`] service, behind the `task` tool.
//!
//! A task's child is a conversation of this registry like any other: listed, openable,
//! pausable and watched through the usual routes and sockets. It runs on its parent's LLM
//! (the same client, so a key posted with the parent works for the child, also when the
//! child is reopened while the parent is live) in the parent's workspace, with
//! `parent_conversation_id` in its catalog entry; the parent lists it in
//! `sub_conversation_ids` (kept in [`CHILDREN_FILE`] beside the parent's state). A child
//! waiting for confirmation waits for a person to decide in the child's conversation.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use tandem_llm::Llm;
use tandem_sdk::subagent::{
    PARENT_FIELD, SubAgentType, SubAgents, TaskError, TaskReport, TaskRequest, builtin_subagents,
    child_options, child_title, dashed, run_child,
};
use tandem_sdk::{Conversation, ConversationMeta};
use tokio_util::sync::CancellationToken;

use super::{Live, Registry, build_tools, read_state};
use crate::workspace::Baseline;

/// The file in a parent's directory listing its children's ids (dashed), oldest first.
pub const CHILDREN_FILE: &str = "tandem_sub_conversations.json";

/// The children of the conversation in `dir`.
pub fn children_of(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(CHILDREN_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn add_child(dir: &Path, child: &str) {
    let mut all = children_of(dir);
    if !all.iter().any(|c| c == child) {
        all.push(child.to_owned());
    }
    let written = serde_json::to_vec(&all)
        .map_err(|e| e.to_string())
        .and_then(|b| {
            tandem_sdk::atomic_write(&dir.join(CHILDREN_FILE), &b).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        tracing::warn!("recording sub-conversation {child}: {e}");
    }
}

/// The parent of the conversation in `dir`, from its catalog entry.
pub fn parent_of(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("meta.json")).ok()?;
    let meta: ConversationMeta = serde_json::from_str(&text).ok()?;
    meta.extra
        .get(PARENT_FIELD)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

fn forked_from(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("meta.json")).ok()?;
    let meta: ConversationMeta = serde_json::from_str(&text).ok()?;
    meta.extra
        .get(tandem_sdk::FORKED_FROM)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

/// The LLM of the live parent of the conversation in `dir` (a child's, or the conversation
/// a fork was made from), for the conversation being opened: a key the parent was given in
/// memory carries over.
pub(super) fn inherited_llm(
    dir: &Path,
    live: &HashMap<String, Arc<Live>>,
) -> Option<(Arc<dyn Llm>, bool)> {
    let parent = parent_of(dir).or_else(|| forked_from(dir))?;
    let parent = live.get(&parent)?;
    Some((Arc::clone(&parent.llm), parent.has_key))
}

impl Registry {
    /// The checkpoint store of `workspace` (created with it), or `None` when checkpoints are
    /// off or the store cannot be opened (logged: the agent runs without checkpoints).
    pub(crate) fn checkpoints(&self, workspace: &Path) -> Option<Arc<tandem_checkpoint::Store>> {
        let home = self.config.checkpoints_home.as_ref()?;
        let _ = std::fs::create_dir_all(workspace);
        match tandem_checkpoint::Store::open(home, workspace) {
            Ok(store) => {
                if !self.config.checkpoints_outside.is_empty() {
                    store.watch_outside(self.config.checkpoints_outside.clone());
                }
                if !self.config.checkpoints_system.is_empty() {
                    // Opened (and its restores finished) when the server started.
                    match tandem_checkpoint::Store::open_system(
                        home,
                        &self.config.checkpoints_system,
                    ) {
                        Ok(system) => store.watch_system(system),
                        Err(e) => tracing::warn!("outside effects are not checkpointed: {e}"),
                    }
                }
                Some(store)
            }
            Err(e) => {
                tracing::warn!(workspace = %workspace.display(), "checkpoints are off for this workspace: {e}");
                None
            }
        }
    }

    /// What the tools of conversation `id` are made with, the sub-agent service included.
    pub(super) fn tool_env(
        &self,
        id: &str,
        dir: &Path,
        workspace: &Path,
        llm: &Arc<dyn Llm>,
    ) -> tandem_sdk::ToolEnv {
        let mut env = tandem_sdk::ToolEnv::new(workspace);
        env.conversation_id = id.to_owned();
        env.conversation_dir = Some(dir.to_owned());
        env.llm = Some(Arc::clone(llm));
        match self.sub_agents.get() {
            Some(agents) => env.with(Arc::clone(agents)),
            None => env,
        }
    }

    /// Puts the sub-agent service into the tools of every conversation made after this.
    pub fn set_sub_agents(&self, agents: Arc<dyn SubAgents>) {
        let _ = self.sub_agents.set(agents);
    }

    /// Creates a child of `parent_id` of type `kind`: a live conversation on the parent's LLM.
    pub(crate) async fn create_child(
        &self,
        parent_id: &str,
        kind: &SubAgentType,
    ) -> Result<Arc<Live>, TaskError> {
        let parent = self
            .get(&dashed(parent_id))
            .await
            .map_err(|e| TaskError::Parent(e.to_string()))?;
        let parent_state = parent.handle.state();
        let mut options = child_options(&parent_state, kind);
        let id = uuid::Uuid::new_v4().to_string();
        options.id = Some(id.clone());
        let workspace = options.workspace.clone();
        let dir = self
            .store
            .dir_for(&id)
            .map_err(|e| TaskError::Create(e.to_string()))?;
        let env = self.tool_env(&id, &dir, &workspace, &parent.llm);
        let set = build_tools(&options.agent, &self.config, env)
            .await
            .map_err(|e| TaskError::Tools(e.to_string()))?;
        let runtime = tandem_sdk::Runtime {
            llm: Arc::clone(&parent.llm),
            tools: set.tools.clone(),
            checkpoints: self.checkpoints(&workspace),
            run_gate: None,
        };
        let handle = Conversation::create(&self.store, options, runtime)
            .await
            .map_err(|e| TaskError::Create(e.to_string()))?;
        Baseline::ensure(handle.dir(), &workspace).await;
        add_child(parent.handle.dir(), &id);
        let entry = self.entry(
            handle,
            set,
            Arc::clone(&parent.llm),
            parent.has_key,
            workspace,
        );
        self.live.lock().await.insert(id, Arc::clone(&entry));
        Ok(entry)
    }

    /// The child `task_id` of `parent_id`, opened if needed; an error listing the parent's
    /// children when it is not one of them.
    pub(crate) async fn open_child(
        &self,
        parent_id: &str,
        task_id: &str,
    ) -> Result<Arc<Live>, TaskError> {
        let parent = dashed(parent_id);
        let child = dashed(task_id);
        let known = self
            .store
            .dir_for(&child)
            .ok()
            .filter(|d| read_state(d).is_some())
            .and_then(|d| parent_of(&d))
            .is_some_and(|p| p == parent);
        if !known {
            let tasks = self
                .store
                .dir_for(&parent)
                .map(|d| children_of(&d))
                .unwrap_or_default();
            return Err(TaskError::NotFound {
                task_id: task_id.to_owned(),
                tasks,
            });
        }
        // The parent first, so the child opens on its LLM.
        let _ = self.get(&parent).await;
        self.get(&child).await.map_err(|e| TaskError::Reopen {
            task_id: task_id.to_owned(),
            reason: e.to_string(),
        })
    }
}

/// The server's sub-agents: children in its registry.
pub struct ServerSubAgents {
    inner: Weak<crate::Inner>,
    types: Vec<SubAgentType>,
}

impl std::fmt::Debug for ServerSubAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSubAgents").finish_non_exhaustive()
    }
}

impl ServerSubAgents {
    /// The service of the server whose state is `inner`.
    pub fn new(inner: Weak<crate::Inner>) -> Self {
        Self {
            inner,
            types: builtin_subagents(),
        }
    }

    async fn run(
        &self,
        child: Result<Arc<Live>, TaskError>,
        prompt: String,
        cancel: CancellationToken,
    ) -> TaskReport {
        let child = match child {
            Ok(c) => c,
            Err(e) => return TaskReport::refused(e),
        };
        // Watched while the task runs: never evicted, also while it waits for a person.
        let _watch = child.watch();
        let outcome = run_child(&child.handle, prompt, cancel, true).await;
        TaskReport {
            task_id: Some(dashed(child.handle.id())),
            outcome,
        }
    }
}

impl SubAgents for ServerSubAgents {
    fn types(&self) -> Vec<SubAgentType> {
        self.types.clone()
    }

    fn start(&self, request: TaskRequest, cancel: CancellationToken) -> BoxFuture<'_, TaskReport> {
        Box::pin(async move {
            let Some(inner) = self.inner.upgrade() else {
                return TaskReport::refused(TaskError::ShuttingDown);
            };
            let Some(kind) = self.types.iter().find(|t| t.name == request.subagent_type) else {
                return TaskReport::refused(TaskError::UnknownType(request.subagent_type));
            };
            let child = inner.registry.create_child(&request.parent_id, kind).await;
            if let Ok(c) = &child {
                let title = child_title(request.description.as_deref(), &request.prompt);
                let _ = c.handle.set_title(title).await;
            }
            self.run(child, request.prompt, cancel).await
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
            let Some(inner) = self.inner.upgrade() else {
                return TaskReport::refused(TaskError::ShuttingDown);
            };
            let child = inner.registry.open_child(parent_id, task_id).await;
            self.run(child, prompt, cancel).await
        })
    }
}
