//! Agent context: the skills, repository context files and message decorations that shape what
//! the model is told, and the system prompt rendered from them.
//!
//! - [`Skill`] (`context/skill.rs`): markdown with optional YAML frontmatter; always-on or
//!   keyword-triggered.
//! - [`load_workspace_skills`] (`context/workspace.rs`): `AGENTS.md`, `CLAUDE.md`,
//!   `.cursorrules` and the skill folders of a workspace, never failing as a whole; and
//!   [`load_user_skills`] from [`user_skills_dir`] (`~/.tandem/skills`).
//! - [`render_system_prompt`] (`context/prompt.rs`): the embedded `prompts/system_prompt.j2`.
//! - [`AgentContext`] (here): the set of skills plus `system_message_suffix` and the user
//!   message prefix/suffix, read from upstream's `AgentContext` JSON, and the per-message work:
//!   which keyword skills a message activates ([`SkillActivation`], which fills a
//!   `MessageEvent`'s `activated_skills` / `extended_content`).

mod prompt;
mod skill;
mod workspace;

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{AgentContextError, SkillJsonError};

pub use prompt::{PromptVars, render_system_prompt};
pub use skill::Skill;
pub use workspace::{
    MAX_CONTEXT_FILE_BYTES, load_user_skills, load_workspace_skills, tandem_home, user_skills_dir,
};

/// What shapes the model's instructions beyond the built-in prompt: skills, a suffix for the
/// system prompt, and text wrapped around each user message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentContext {
    /// Skills, always-on and keyword-triggered, in prompt order. Names are unique.
    pub skills: Vec<Skill>,
    /// Appended at the very end of the system prompt.
    pub system_message_suffix: Option<String>,
    /// Put before the text of every user message (a Tandem extension to upstream's shape).
    pub user_message_prefix: Option<String>,
    /// Put after the text of every user message.
    pub user_message_suffix: Option<String>,
}

/// The keyword skills one user message activated: what goes into its `MessageEvent`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillActivation {
    /// Names of the activated skills, in context order (`MessageEvent.activated_skills`).
    pub activated_skills: Vec<String>,
    /// One text block per activated skill, naming it and the keyword that matched
    /// (`MessageEvent.extended_content`, each as a text content item).
    pub extended_content: Vec<String>,
}

/// Upstream's `AgentContext` JSON, as far as we use it. Upstream-only fields (`load_*`,
/// marketplaces, secrets, ...) are ignored: resolving them is the caller's business.
#[derive(Deserialize)]
struct RawContext {
    #[serde(default)]
    skills: Option<Vec<Value>>,
    #[serde(default)]
    system_message_suffix: Option<String>,
    #[serde(default)]
    user_message_prefix: Option<String>,
    #[serde(default)]
    user_message_suffix: Option<String>,
}

/// Upstream's `Skill` JSON; also accepts the flat `triggers` list of its `SkillInfo`.
#[derive(Deserialize)]
struct RawSkill {
    name: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    trigger: Option<RawTrigger>,
    #[serde(default)]
    triggers: Option<Vec<String>>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

/// Upstream's `KeywordTrigger` / `TaskTrigger` / `PathTrigger`, told apart by `type` (or, when
/// that is missing, by which list is present).
#[derive(Deserialize)]
struct RawTrigger {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    keywords: Option<Vec<String>>,
    #[serde(default)]
    triggers: Option<Vec<String>>,
    #[serde(default)]
    paths: Option<Vec<String>>,
}

impl AgentContext {
    /// An empty context: no skills, no decorations.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads upstream's `AgentContext` JSON (`AgentContext-Input` in its OpenAPI document):
    /// `skills` with `name`, `content`, `trigger` (`keyword` or `task`; `null` = always on),
    /// `source`, `description`; `system_message_suffix`, `user_message_suffix`, and our
    /// `user_message_prefix`. `null` is an empty context; unknown fields are ignored.
    ///
    /// Errors name the offending field, e.g. `skills[1] (docker): ...`. Path-triggered skills
    /// and duplicate names are rejected rather than silently dropped.
    pub fn from_json(value: &Value) -> Result<AgentContext, AgentContextError> {
        if value.is_null() {
            return Ok(Self::default());
        }
        if !value.is_object() {
            return Err(AgentContextError::NotAnObject(kind_of(value)));
        }
        let raw = RawContext::deserialize(value).map_err(AgentContextError::Shape)?;
        let mut ctx = AgentContext {
            skills: Vec::new(),
            system_message_suffix: raw.system_message_suffix,
            user_message_prefix: raw.user_message_prefix,
            user_message_suffix: raw.user_message_suffix,
        };
        for (i, item) in raw.skills.unwrap_or_default().iter().enumerate() {
            let skill = skill_from_json(item).map_err(|problem| AgentContextError::Skill {
                index: i,
                name: item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned(),
                problem,
            })?;
            if ctx.skills.iter().any(|s| s.name == skill.name) {
                return Err(AgentContextError::DuplicateSkill {
                    index: i,
                    name: skill.name,
                });
            }
            ctx.skills.push(skill);
        }
        Ok(ctx)
    }

    /// This context as upstream's `AgentContext` JSON (the shape [`AgentContext::from_json`]
    /// reads). `user_message_prefix` is written only when set, as upstream does not know it.
    pub fn to_json(&self) -> Value {
        let skills: Vec<Value> = self
            .skills
            .iter()
            .map(|s| {
                let trigger = if s.is_always_on() {
                    Value::Null
                } else {
                    json!({ "type": "keyword", "keywords": s.triggers })
                };
                json!({
                    "name": s.name,
                    "content": s.content,
                    "trigger": trigger,
                    "source": s.source.as_ref().map(|p| p.display().to_string()),
                    "description": s.description,
                })
            })
            .collect();
        let mut out = Map::new();
        out.insert("skills".into(), Value::Array(skills));
        out.insert(
            "system_message_suffix".into(),
            json!(self.system_message_suffix),
        );
        out.insert(
            "user_message_suffix".into(),
            json!(self.user_message_suffix),
        );
        if let Some(prefix) = &self.user_message_prefix {
            out.insert("user_message_prefix".into(), json!(prefix));
        }
        Value::Object(out)
    }

    /// Adds skills found in the workspace. As upstream does for project skills, they are
    /// authoritative: one with the name of an existing skill replaces it in place.
    pub fn add_project_skills(&mut self, skills: impl IntoIterator<Item = Skill>) {
        for skill in skills {
            match self.skills.iter_mut().find(|s| s.name == skill.name) {
                Some(existing) => *existing = skill,
                None => self.skills.push(skill),
            }
        }
    }

    /// Adds the user's own skills (`~/.tandem/skills`): a skill of the same name given in the
    /// context or found in the workspace wins, so a repository can override a personal one.
    pub fn add_user_skills(&mut self, skills: impl IntoIterator<Item = Skill>) {
        for skill in skills {
            if !self.skills.iter().any(|s| s.name == skill.name) {
                self.skills.push(skill);
            }
        }
    }

    /// The always-on skills, in order: they go into the system prompt.
    pub fn always_on(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| s.is_always_on())
    }

    /// The keyword skills that `text` activates, each once, in context order. Matching ignores
    /// case and is word-ish (see [`Skill::matched_trigger`]).
    pub fn triggered(&self, text: &str) -> Vec<&Skill> {
        let mut out: Vec<&Skill> = Vec::new();
        for skill in &self.skills {
            if !skill.is_always_on()
                && skill.matched_trigger(text).is_some()
                && !out.iter().any(|s| s.name == skill.name)
            {
                out.push(skill);
            }
        }
        out
    }

    /// The keyword skills `text` activates, formatted for the user's `MessageEvent`. Each block
    /// names the skill and the keyword so the model knows why the text is there.
    pub fn activate(&self, text: &str) -> SkillActivation {
        let mut activation = SkillActivation::default();
        for skill in self.triggered(text) {
            let keyword = skill.matched_trigger(text).unwrap_or_default();
            activation.activated_skills.push(skill.name.clone());
            activation.extended_content.push(format!(
                "<skill name=\"{}\" keyword=\"{}\">\n{}\n</skill>",
                skill.name,
                keyword,
                skill.content.trim()
            ));
        }
        activation
    }

    /// `text` with `user_message_prefix` before and `user_message_suffix` after, each separated
    /// by a blank line; blank decorations are left out.
    pub fn decorate_user_message(&self, text: &str) -> String {
        let prefix = self
            .user_message_prefix
            .as_deref()
            .filter(|s| !s.trim().is_empty());
        let suffix = self
            .user_message_suffix
            .as_deref()
            .filter(|s| !s.trim().is_empty());
        let mut out = String::with_capacity(
            text.len() + prefix.map_or(0, |p| p.len() + 2) + suffix.map_or(0, |s| s.len() + 2),
        );
        if let Some(prefix) = prefix {
            out.push_str(prefix.trim_end());
            out.push_str("\n\n");
        }
        out.push_str(text);
        if let Some(suffix) = suffix {
            out.push_str("\n\n");
            out.push_str(suffix.trim_start());
        }
        out
    }
}

/// One upstream `Skill` object.
fn skill_from_json(item: &Value) -> Result<Skill, SkillJsonError> {
    let raw = RawSkill::deserialize(item)?;
    let name = raw.name.trim();
    if name.is_empty() {
        return Err(SkillJsonError::NoName);
    }
    let mut triggers = raw.triggers.unwrap_or_default();
    if let Some(trigger) = raw.trigger {
        let kind = trigger
            .kind
            .as_deref()
            .unwrap_or(if trigger.paths.is_some() {
                "path"
            } else {
                "keyword"
            });
        match kind {
            "keyword" | "task" => {
                triggers.extend(trigger.keywords.unwrap_or_default());
                triggers.extend(trigger.triggers.unwrap_or_default());
            }
            "path" => return Err(SkillJsonError::PathTrigger),
            other => return Err(SkillJsonError::UnknownTrigger(other.to_owned())),
        }
    }
    let mut skill = Skill::keyword(name, raw.content, triggers);
    skill.source = raw
        .source
        .filter(|s| !s.trim().is_empty())
        .map(PathBuf::from);
    skill.description = raw.description.filter(|d| !d.trim().is_empty());
    Ok(skill)
}

/// A JSON value's type, for error messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> AgentContext {
        AgentContext {
            skills: vec![
                Skill::always_on("agents", "Use cargo."),
                Skill::keyword("docker", "Docker tips.", ["docker", "container"]),
                Skill::keyword("git", "Git tips.", ["git"]),
            ],
            ..AgentContext::default()
        }
    }

    #[test]
    fn activation_names_skill_and_keyword() {
        let a = ctx().activate("Put it in a Container and push to GitHub");
        assert_eq!(a.activated_skills, vec!["docker", "git"]);
        assert!(a.extended_content[0].starts_with("<skill name=\"docker\" keyword=\"container\">"));
        assert!(a.extended_content[0].contains("Docker tips."));
    }

    #[test]
    fn project_skills_replace_same_name() {
        let mut c = ctx();
        c.add_project_skills([
            Skill::always_on("git", "Project git rules."),
            Skill::always_on("x", ""),
        ]);
        assert_eq!(c.skills.len(), 4);
        assert_eq!(c.skills[2].content, "Project git rules.");
        assert!(c.skills[2].is_always_on());
    }

    #[test]
    fn json_round_trip() {
        let mut c = ctx();
        c.system_message_suffix = Some("end".into());
        c.user_message_prefix = Some("pre".into());
        assert_eq!(AgentContext::from_json(&c.to_json()).unwrap(), c);
    }

    #[test]
    fn rejects_non_objects_and_bad_triggers() {
        assert!(
            AgentContext::from_json(&json!([1]))
                .unwrap_err()
                .to_string()
                .contains("an array")
        );
        let err = AgentContext::from_json(&json!({"skills": [
            {"name": "ok", "content": ""},
            {"name": "rules", "content": "", "trigger": {"type": "path", "paths": ["*.rs"]}}
        ]}))
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("skills[1] (rules):"), "{err}");
    }
}
