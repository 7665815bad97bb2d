//! `tandem-tools`: the agent's core tools, one module per tool, each with its definition (the
//! name and description the model reads) apart from its executor.
//!
//! Each tool is a [`TypedTool`](tandem_sdk::TypedTool): its input is an action struct of
//! `tandem-protocol` whose field doc comments are the argument schema the model reads and into
//! which the model's arguments are parsed, so the executor receives typed input.
//!
//! Depends on `tandem-sdk` (the [`Tool`] trait) and `tandem-protocol`; never
//! on servers or the desktop host. Entry points: [`builtin_catalog`], every built-in tool by the
//! name an agent spec gives it (hosts use `tandem_host::catalog`, which adds the browser's and
//! the MCP client as the source of a spec's `mcp_config`), and [`resolve_tools`], which makes a
//! spec's tools through a catalog (the same way in `tandem run`, the server and the desktop); [`default_tools`] is the preset the
//! default agent runs with (`terminal`, `file_editor`, `task_tracker`, `finish`, `think`).

use std::sync::Arc;
use std::time::Duration;

use tandem_sdk::{Tool, ToolCatalog, ToolEnv};

pub mod agent_user;
pub mod file_editor;
pub mod finish;
pub mod glob;
pub mod grep;
mod resolve;
mod stateless;
pub mod task;
pub mod task_tracker;
pub mod terminal;
pub mod think;
mod walk;

pub use file_editor::FileEditorTool;
pub use finish::FinishTool;
pub use resolve::{ResolveError, resolve_tools};
pub use stateless::{Stateless, StatelessTool};
pub use task_tracker::TaskTrackerTool;
pub use think::ThinkTool;

/// The default agent's tools, in the order the model is shown them: terminal, file_editor,
/// task_tracker, finish, think.
///
/// `terminal_soft_timeout` is how long the terminal waits for a quiet command before it
/// returns partial output; `None` keeps the terminal's own default.
pub fn default_tools(terminal_soft_timeout: Option<Duration>) -> Vec<Arc<dyn Tool>> {
    let mut terminal = terminal::TerminalTool::new();
    if let Some(soft_timeout) = terminal_soft_timeout {
        terminal = terminal.with_soft_timeout(soft_timeout);
    }
    vec![
        Arc::new(terminal),
        Arc::new(FileEditorTool::new()),
        Arc::new(TaskTrackerTool::new()),
        Arc::new(FinishTool::new()),
        Arc::new(ThinkTool::new()),
    ]
}

/// Every built-in tool by the names an agent spec may give it: the canonical (upstream's spec
/// name) first, then upstream's class names as aliases. The terminal is the host's shared one
/// when the [`ToolEnv`] carries an `Arc<TerminalTool>` (the server's, which its PTY socket
/// attaches to), else a private one (logged: the live terminal cannot attach to it). Only the
/// built-ins: a host's catalog (`tandem_host::catalog`) adds the browser's tools.
pub fn builtin_catalog() -> ToolCatalog {
    let mut c = ToolCatalog::new();
    c.register_tool(
        &[terminal::TOOL_NAME, "TerminalTool", "BashTool"],
        |_, env: &ToolEnv| {
            let shared = env.get::<Arc<terminal::TerminalTool>>().unwrap_or_else(|| {
                // Right for a headless run; on a host with a live terminal it is a bug.
                tracing::info!(
                    "no shared terminal in the tool environment: the agent gets a private one"
                );
                Arc::new(terminal::TerminalTool::new())
            });
            Ok(shared as Arc<dyn Tool>)
        },
    );
    c.register_tool(&[file_editor::NAME, "FileEditorTool"], |_, _| {
        Ok(Arc::new(FileEditorTool::new()))
    });
    c.register_tool(&[task_tracker::NAME, "TaskTrackerTool"], |_, _| {
        Ok(Arc::new(TaskTrackerTool::new()))
    });
    c.register_tool(&[finish::NAME, "FinishTool"], |_, _| {
        Ok(Arc::new(FinishTool::new()))
    });
    c.register_tool(&[think::NAME, "ThinkTool"], |_, _| {
        Ok(Arc::new(ThinkTool::new()))
    });
    c.register_tool(&[glob::NAME, "GlobTool"], |_, env: &ToolEnv| {
        Ok(Arc::new(glob::GlobTool::new(&env.working_dir)))
    });
    c.register_tool(&[grep::NAME, "GrepTool"], |_, env: &ToolEnv| {
        Ok(Arc::new(grep::GrepTool::new(&env.working_dir)))
    });
    c.register_tool(
        &[task::TOOL_SET, "TaskToolSet", task::NAME, "TaskTool"],
        |_, env: &ToolEnv| Ok(Arc::new(task::TaskTool::new(env))),
    );
    c
}

/// The names of [`default_tools`], in the same order.
pub fn tool_names() -> Vec<&'static str> {
    vec![
        terminal::TOOL_NAME,
        file_editor::NAME,
        task_tracker::NAME,
        finish::NAME,
        think::NAME,
    ]
}
