//! One skill: a named piece of guidance for the model, either always in the system prompt or
//! added to a user message when one of its keywords appears.
//!
//! Skills are written as markdown with optional YAML frontmatter. The frontmatter spellings of
//! upstream OpenHands (`triggers`, `keywords`, `trigger` as a list or as a `{type, keywords}`
//! object) are all accepted so existing `.openhands/skills` and `.openhands/microagents` folders
//! load unchanged; fields we do not use (`type`, `version`, `agent`, `inputs`, ...) are ignored.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::SkillError;

/// A named piece of guidance for the model.
///
/// With no `triggers` the skill is always on: its content goes into the system prompt's
/// repository-context block. With triggers it is a keyword skill: its content is added to a user
/// message that mentions one of the keywords (see [`Skill::matched_trigger`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Unique name within an agent context (`agents`, `cursorrules`, a file stem, or the
    /// frontmatter's `name`).
    pub name: String,
    /// The guidance itself, markdown, without frontmatter.
    pub content: String,
    /// Keywords that activate the skill; empty means always on.
    pub triggers: Vec<String>,
    /// The file it was read from, if any; `None` for skills defined in code or JSON.
    pub source: Option<PathBuf>,
    /// One line on what the skill is for, shown when keyword skills are listed.
    pub description: Option<String>,
}

/// The frontmatter fields we read. Unknown fields are ignored on purpose: upstream skill files
/// carry `type`, `version`, `agent`, `inputs`, `mcp_tools`, ...
#[derive(Debug, Default, Deserialize)]
struct Frontmatter {
    name: Option<String>,
    #[serde(default, alias = "keywords")]
    triggers: Option<TriggerList>,
    #[serde(default)]
    trigger: Option<TriggerField>,
    description: Option<String>,
}

/// `triggers: docker` or `triggers: [docker, container]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum TriggerList {
    One(String),
    Many(Vec<String>),
}

/// Upstream's `trigger`: a list, a single keyword, or the `{type: keyword, keywords: [...]}` /
/// `{type: task, triggers: [...]}` object of its JSON schema.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum TriggerField {
    List(TriggerList),
    Object {
        #[serde(default, alias = "triggers")]
        keywords: Option<TriggerList>,
    },
}

impl TriggerList {
    fn into_vec(self) -> Vec<String> {
        match self {
            Self::One(s) => vec![s],
            Self::Many(v) => v,
        }
    }
}

impl Skill {
    /// An always-on skill defined in code.
    pub fn always_on(name: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            content: content.into(),
            triggers: Vec::new(),
            source: None,
            description: None,
        }
    }

    /// A keyword skill defined in code. Keywords are normalised as in [`Skill::parse_markdown`].
    pub fn keyword<I, S>(name: impl Into<String>, content: impl Into<String>, triggers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            name: name.into(),
            content: content.into(),
            triggers: normalise_triggers(triggers.into_iter().map(Into::into)),
            source: None,
            description: None,
        }
    }

    /// Parses a markdown skill with optional YAML frontmatter between `---` lines.
    ///
    /// `name_hint` (usually the file stem) names the skill unless the frontmatter has a `name`.
    /// Triggers come from `triggers`, `keywords` or `trigger`; they are trimmed, lowercased
    /// duplicates dropped, and an empty list means always on. The error names `source` (or the
    /// hint when there is none) and says what is wrong with the YAML.
    pub fn parse_markdown(
        name_hint: &str,
        text: &str,
        source: Option<&Path>,
    ) -> Result<Skill, SkillError> {
        let origin = source.map_or_else(|| name_hint.to_owned(), |p| p.display().to_string());
        Self::parse_markdown_as(name_hint, text, source, &origin)
    }

    /// [`Skill::parse_markdown`] with errors naming `origin` (e.g. a workspace-relative path).
    pub(crate) fn parse_markdown_as(
        name_hint: &str,
        text: &str,
        source: Option<&Path>,
        origin: &str,
    ) -> Result<Skill, SkillError> {
        let (yaml, body) =
            split_frontmatter(text).ok_or_else(|| SkillError::UnclosedFrontmatter {
                origin: origin.to_owned(),
            })?;
        let front = match yaml {
            Some(yaml) if !yaml.trim().is_empty() => serde_norway::from_str::<Frontmatter>(yaml)
                .map_err(|source| SkillError::Yaml {
                    origin: origin.to_owned(),
                    source,
                })?,
            _ => Frontmatter::default(),
        };

        let name = front
            .name
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| name_hint.trim().to_owned());
        if name.is_empty() {
            return Err(SkillError::NoName {
                origin: origin.to_owned(),
            });
        }

        let mut raw = Vec::new();
        if let Some(list) = front.triggers {
            raw.extend(list.into_vec());
        }
        match front.trigger {
            Some(TriggerField::List(list)) => raw.extend(list.into_vec()),
            Some(TriggerField::Object {
                keywords: Some(list),
            }) => raw.extend(list.into_vec()),
            Some(TriggerField::Object { keywords: None }) | None => {}
        }

        Ok(Skill {
            name,
            content: body.trim().to_owned(),
            triggers: normalise_triggers(raw),
            source: source.map(Path::to_path_buf),
            description: front
                .description
                .map(|d| d.trim().to_owned())
                .filter(|d| !d.is_empty()),
        })
    }

    /// Whether the skill is always on (has no triggers).
    pub fn is_always_on(&self) -> bool {
        self.triggers.is_empty()
    }

    /// The first of this skill's keywords that `text` mentions, if any.
    ///
    /// Matching ignores case and is word-ish: a keyword must start at a word boundary but may
    /// run on into a longer word, so `git` matches "Git", "github" and "git's" but not
    /// "digital", and `test` matches "testing". A keyword that starts with punctuation
    /// (`/deploy`, `.env`) needs no boundary before it.
    pub fn matched_trigger(&self, text: &str) -> Option<&str> {
        let haystack = text.to_lowercase();
        self.triggers
            .iter()
            .find(|t| keyword_matches(&haystack, &t.to_lowercase()))
            .map(String::as_str)
    }
}

/// Splits `---` frontmatter from the body: `(None, text)` when there is none, `None` when the
/// frontmatter is never closed.
fn split_frontmatter(text: &str) -> Option<(Option<&str>, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Some((None, text));
    };
    if first.trim_end() != "---" {
        return Some((None, text));
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for line in lines {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let yaml = &text[yaml_start..offset];
            let body = &text[offset + line.len()..];
            return Some((Some(yaml), body));
        }
        offset += line.len();
    }
    None
}

/// Trims keywords, drops empty ones and case-insensitive duplicates, keeping the first spelling.
fn normalise_triggers(raw: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = t.trim();
        if t.is_empty() || out.iter().any(|o| o.to_lowercase() == t.to_lowercase()) {
            continue;
        }
        out.push(t.to_owned());
    }
    out
}

/// Whether lowercased `keyword` occurs in lowercased `haystack` at a word start.
fn keyword_matches(haystack: &str, keyword: &str) -> bool {
    if keyword.is_empty() {
        return false;
    }
    let needs_boundary = keyword.chars().next().is_some_and(is_word_char);
    haystack.match_indices(keyword).any(|(at, _)| {
        !needs_boundary
            || haystack[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !is_word_char(c))
    })
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frontmatter_and_body() {
        let (yaml, body) = split_frontmatter("---\nname: x\n---\nbody\n").unwrap();
        assert_eq!(yaml, Some("name: x\n"));
        assert_eq!(body, "body\n");
    }

    #[test]
    fn no_frontmatter_when_first_line_is_not_a_fence() {
        let (yaml, body) = split_frontmatter("# Title\n---\n").unwrap();
        assert_eq!(yaml, None);
        assert_eq!(body, "# Title\n---\n");
    }

    #[test]
    fn handles_crlf_and_bom() {
        let (yaml, body) = split_frontmatter("\u{feff}---\r\nname: x\r\n---\r\nbody").unwrap();
        assert_eq!(yaml, Some("name: x\r\n"));
        assert_eq!(body, "body");
    }

    #[test]
    fn unclosed_frontmatter_is_an_error() {
        assert!(split_frontmatter("---\nname: x\n").is_none());
    }

    #[test]
    fn keyword_boundaries() {
        assert!(keyword_matches("use git here", "git"));
        assert!(keyword_matches("see github", "git"));
        assert!(!keyword_matches("digital", "git"));
        assert!(keyword_matches("run /deploy now", "/deploy"));
        assert!(keyword_matches("x/deploy", "/deploy"));
        assert!(keyword_matches("git", "git"));
        assert!(!keyword_matches("anything", ""));
    }

    #[test]
    fn triggers_are_normalised() {
        let t = normalise_triggers(["Docker".into(), " docker ".into(), "".into(), "k8s".into()]);
        assert_eq!(t, vec!["Docker", "k8s"]);
    }
}
