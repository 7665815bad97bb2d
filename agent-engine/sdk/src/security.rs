//! The rule-based security analyzer: a deterministic judgement of how risky an action is,
//! independent of the model's own `security_risk`, with the rule that decided it (for the UI).
//!
//! - terminal: the command line is read into simple commands (`security/shell.rs`) and each is
//!   judged by the rules in `security/command_rules.rs`; the riskiest wins. Commands the rules
//!   do not recognise are MEDIUM: running an unknown program may change the workspace, and
//!   UNKNOWN is kept for command lines that cannot be read at all (unbalanced quotes).
//!   Sending a control key to a running process is LOW; other input is judged as a command
//!   and is at least MEDIUM (the running program decides what it does).
//! - file_editor: any path outside the workspace is HIGH (the tool refuses it anyway, but an
//!   attempt deserves attention); `view` is LOW; every change, `create` included, is MEDIUM,
//!   which keeps the judgement free of file-system reads (a new file may be a script run later).
//! - think, finish, task_tracker: LOW. Unknown actions: UNKNOWN.
//!
//! Paths are judged from their text (`..` applied, symbolic links not followed); `/tmp` and
//! `/var/tmp` count as scratch space, so writing there is MEDIUM, not HIGH.

use std::path::Path;

use tandem_protocol::{Action, FileEditorAction, SecurityRisk, TerminalAction};

mod command_rules;
mod paths;
mod shell;
#[cfg(test)]
mod tests;

use command_rules::{Context, Finding};
use paths::{Location, Workspace};

pub use paths::lexical_normalize;

/// The outcome of the analyzer: the level and the rule that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiskAssessment {
    /// The level.
    pub risk: SecurityRisk,
    /// Stable id of the rule that decided (`rm-root-or-home`, `read-only`, ...).
    pub rule: &'static str,
    /// What was matched, in a sentence for the person approving the action.
    pub reason: String,
}

impl From<Finding> for RiskAssessment {
    fn from(f: Finding) -> Self {
        Self {
            risk: f.risk,
            rule: f.rule,
            reason: f.reason,
        }
    }
}

/// Judges actions by fixed rules. Holds no state: the same action and workspace always get the
/// same answer.
#[derive(Debug, Clone, Default)]
pub struct RuleAnalyzer {
    _private: (),
}

impl RuleAnalyzer {
    /// The analyzer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The risk of `action` for an agent working in `workspace`.
    pub fn assess(&self, action: &Action, workspace: &Path) -> SecurityRisk {
        self.explain(action, workspace).risk
    }

    /// The risk of `action` and the rule that decided it.
    pub fn explain(&self, action: &Action, workspace: &Path) -> RiskAssessment {
        let workspace = Workspace::new(workspace);
        match action {
            Action::Terminal(t) => terminal(t, &workspace).into(),
            Action::FileEditor(f) => file_editor(f, &workspace),
            Action::TaskTracker(_)
            | Action::Think(_)
            | Action::Finish(_)
            | Action::Glob(_)
            | Action::Grep(_) => RiskAssessment {
                risk: SecurityRisk::Low,
                rule: "no-side-effects",
                reason: format!(
                    "`{}` changes nothing outside the conversation",
                    action.kind()
                ),
            },
            // Looking at the page, moving within the session or asking a person.
            Action::BrowserGetState(_)
            | Action::BrowserGetContent(_)
            | Action::BrowserScroll(_)
            | Action::BrowserListTabs(_)
            | Action::BrowserSwitchTab(_)
            | Action::BrowserGetStorage(_)
            | Action::BrowserStartRecording(_)
            | Action::BrowserStopRecording(_)
            | Action::BrowserRequestHandoff(_) => RiskAssessment {
                risk: SecurityRisk::Low,
                rule: "browser-no-side-effects",
                reason: format!("`{}` sends nothing to a web page", action.kind()),
            },
            // What a page does with a visit, click or text cannot be judged by rules.
            Action::BrowserNavigate(_)
            | Action::BrowserClick(_)
            | Action::BrowserType(_)
            | Action::BrowserGoBack(_)
            | Action::BrowserCloseTab(_)
            | Action::BrowserSetStorage(_) => RiskAssessment {
                risk: SecurityRisk::Unknown,
                rule: "browser-action",
                reason: format!(
                    "`{}` acts on a web page; no rules judge what the page does with it",
                    action.kind()
                ),
            },
            Action::Mcp(_) => RiskAssessment {
                risk: SecurityRisk::Unknown,
                rule: "mcp-tool",
                reason: "an MCP server's tool; no rules judge what it does".to_owned(),
            },
            // The sub-agent's own actions are judged by its own (inherited) policy.
            Action::Task(_) => RiskAssessment {
                risk: SecurityRisk::Low,
                rule: "sub-agent",
                reason: "a sub-agent's actions are each checked as they come".to_owned(),
            },
            Action::Unknown(_) => RiskAssessment {
                risk: SecurityRisk::Unknown,
                rule: "unknown-action",
                reason: format!("no rules for `{}`", action.kind()),
            },
        }
    }
}

const CONTROL_KEYS: [&str; 6] = ["C-c", "C-d", "C-z", "C-\\", "C-l", ""];

fn terminal(action: &TerminalAction, workspace: &Workspace) -> Finding {
    let mut ctx = Context {
        workspace,
        cwd: Some(workspace.root().to_path_buf()),
        depth: 0,
    };
    if action.reset && action.command.trim().is_empty() {
        return Finding::new(SecurityRisk::Low, "read-only", "restarts the agent's shell");
    }
    if action.is_input {
        if CONTROL_KEYS.contains(&action.command.trim()) {
            return Finding::new(
                SecurityRisk::Low,
                "terminal-input",
                "sends a control key to the running process",
            );
        }
        let typed = command_rules::assess_script(&action.command, &mut ctx);
        return Finding::new(
            SecurityRisk::Medium,
            "terminal-input",
            "types input into the running process",
        )
        .max(typed);
    }
    command_rules::assess_script(&action.command, &mut ctx)
}

fn file_editor(action: &FileEditorAction, workspace: &Workspace) -> RiskAssessment {
    let path = action.path.as_str();
    let location = if path.contains('$') || path.starts_with('~') {
        Location::Outside
    } else {
        workspace.locate(path, &Some(workspace.root().to_path_buf()))
    };
    if location != Location::Inside {
        return RiskAssessment {
            risk: SecurityRisk::High,
            rule: "file-outside-workspace",
            reason: format!(
                "`file_editor {}` on {path}, outside the workspace",
                action.command
            ),
        };
    }
    match action.command.as_str() {
        "view" => RiskAssessment {
            risk: SecurityRisk::Low,
            rule: "file-view",
            reason: format!("views {path}"),
        },
        "create" | "str_replace" | "insert" | "undo_edit" => RiskAssessment {
            risk: SecurityRisk::Medium,
            rule: "file-edit",
            reason: format!("`{}` changes {path} in the workspace", action.command),
        },
        other => RiskAssessment {
            risk: SecurityRisk::Unknown,
            rule: "unknown-action",
            reason: format!("unknown file_editor command `{other}`"),
        },
    }
}
