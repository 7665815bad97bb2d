//! The system prompt: an embedded minijinja template rendered with the facts of the run and the
//! agent context.
//!
//! Skill content and the suffix are passed to the template as values, never compiled as template
//! source, so a `{{` in an `AGENTS.md` cannot break or steer the rendering.

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use super::AgentContext;
use crate::error::{Result, SdkError};

/// The template, embedded so the engine needs no files at run time.
const SYSTEM_PROMPT_TEMPLATE: &str = include_str!("../../prompts/system_prompt.j2");

/// What the system prompt needs to know about this run, beyond the [`AgentContext`].
///
/// Time comes in as a parameter (`date`) so the rendering is deterministic in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptVars {
    /// The workspace directory (absolute); the agent is told to keep its work inside it.
    pub workspace_dir: PathBuf,
    /// The agent runs directly on the person's machine rather than in a sandbox.
    pub cli_mode: bool,
    /// The LLM rates each tool call's `security_risk`; adds the section explaining how.
    pub llm_security_analyzer: bool,
    /// Operating system family, e.g. `linux`, `macos`, `windows`.
    pub os: String,
    /// CPU architecture, e.g. `x86_64`, `aarch64`.
    pub arch: String,
    /// A free-form description of the platform, e.g. `Ubuntu 24.04`.
    pub os_description: Option<String>,
    /// The shell the terminal tool runs, e.g. `bash`.
    pub shell: Option<String>,
    /// Names of the tools the agent has, in the order they are offered.
    pub tools: Vec<String>,
    /// Today's date, when the caller wants the model to know it.
    pub date: Option<chrono::NaiveDate>,
}

impl PromptVars {
    /// Facts for `workspace_dir` on the machine this runs on: its OS and architecture, sandboxed,
    /// no security-risk section, no tools, no date.
    pub fn new(workspace_dir: impl Into<PathBuf>) -> Self {
        Self {
            workspace_dir: workspace_dir.into(),
            cli_mode: false,
            llm_security_analyzer: false,
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            os_description: None,
            shell: None,
            tools: Vec::new(),
            date: None,
        }
    }
}

/// Everything the template sees. Kept separate from the public types so the template's names are
/// one stable, documented surface.
#[derive(Serialize)]
struct TemplateContext<'a> {
    workspace_dir: String,
    cli_mode: bool,
    llm_security_analyzer: bool,
    os: &'a str,
    arch: &'a str,
    os_description: Option<&'a str>,
    shell: Option<&'a str>,
    tools: &'a [String],
    date: Option<String>,
    repository_context: Vec<ContextBlock<'a>>,
    keyword_skills: Vec<KeywordSkill<'a>>,
    system_message_suffix: Option<&'a str>,
}

/// An always-on skill as rendered in the repository-context block.
#[derive(Serialize)]
struct ContextBlock<'a> {
    name: &'a str,
    source: Option<String>,
    content: &'a str,
}

/// A keyword skill as listed in the prompt: no content, which arrives with the message.
#[derive(Serialize)]
struct KeywordSkill<'a> {
    name: &'a str,
    triggers: &'a [String],
    description: Option<&'a str>,
    source: Option<String>,
}

/// Renders the system prompt for `ctx` and `vars` from the embedded template.
///
/// Always-on skills go into a repository-context block (in the context's order), keyword skills
/// are listed by name with their keywords, and `system_message_suffix` comes last. Fails only if
/// the embedded template itself is broken, which the tests rule out.
pub fn render_system_prompt(ctx: &AgentContext, vars: &PromptVars) -> Result<String> {
    let workspace = vars.workspace_dir.as_path();
    let template_ctx = TemplateContext {
        workspace_dir: workspace.display().to_string(),
        cli_mode: vars.cli_mode,
        llm_security_analyzer: vars.llm_security_analyzer,
        os: &vars.os,
        arch: &vars.arch,
        os_description: non_empty(vars.os_description.as_deref()),
        shell: non_empty(vars.shell.as_deref()),
        tools: &vars.tools,
        date: vars.date.map(|d| d.format("%Y-%m-%d").to_string()),
        repository_context: ctx
            .always_on()
            .filter(|s| !s.content.trim().is_empty())
            .map(|s| ContextBlock {
                name: &s.name,
                source: s.source.as_deref().map(|p| relative_to(p, workspace)),
                content: s.content.trim(),
            })
            .collect(),
        keyword_skills: ctx
            .skills
            .iter()
            .filter(|s| !s.is_always_on())
            .map(|s| KeywordSkill {
                name: &s.name,
                triggers: &s.triggers,
                description: non_empty(s.description.as_deref()),
                source: s.source.as_deref().map(|p| relative_to(p, workspace)),
            })
            .collect(),
        system_message_suffix: non_empty(ctx.system_message_suffix.as_deref()),
    };

    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
    env.add_template("system_prompt.j2", SYSTEM_PROMPT_TEMPLATE)
        .map_err(template_error)?;
    let rendered = env
        .get_template("system_prompt.j2")
        .and_then(|t| t.render(minijinja::value::Serde(&template_ctx)))
        .map_err(template_error)?;
    Ok(tidy(&rendered))
}

fn template_error(e: minijinja::Error) -> SdkError {
    SdkError::Template(format!("system_prompt.j2: {e:#}"))
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

/// `path` relative to `workspace` when inside it, else as is.
fn relative_to(path: &Path, workspace: &Path) -> String {
    path.strip_prefix(workspace)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Strips trailing spaces and collapses runs of blank lines, which skill files tend to bring.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("a  \n\n\n\nb\n\n"), "a\n\nb");
    }

    #[test]
    fn relative_inside_absolute_outside() {
        assert_eq!(
            relative_to(Path::new("/w/AGENTS.md"), Path::new("/w")),
            "AGENTS.md"
        );
        assert_eq!(
            relative_to(Path::new("/x/a.md"), Path::new("/w")),
            "/x/a.md"
        );
    }
}
