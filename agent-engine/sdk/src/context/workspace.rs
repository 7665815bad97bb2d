//! Repository context files found in a workspace (`AGENTS.md`, `CLAUDE.md`, `.cursorrules` and
//! skill folders) and the user's own skills (`$TANDEM_HOME/skills`, by default
//! `~/.tandem/skills`), which every conversation gets.
//!
//! Loading never fails as a whole: a file that cannot be read or parsed is skipped with a warning
//! naming it, since one broken skill should not stop a conversation from starting. The order is
//! fixed (root files first, then each folder sorted by file name) so the rendered system prompt is
//! the same on every run and prompt caching keeps working.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::skill::Skill;

/// The most bytes read from one context file; the rest is cut off with a note, because the
/// system prompt is sent on every model call.
pub const MAX_CONTEXT_FILE_BYTES: usize = 64 * 1024;

/// Root files that are always-on repository context: (candidate file names, skill name). The
/// first candidate that exists wins, so a case-insensitive file system yields one skill, not two.
const ROOT_FILES: &[(&[&str], &str)] = &[
    (&["AGENTS.md", "agents.md"], "agents"),
    (&["CLAUDE.md", "claude.md"], "claude"),
    (&[".cursorrules"], "cursorrules"),
];

/// Folders of markdown skills, in precedence order: on a name clash the earlier one wins.
/// `.tandem/skills` is Tandem's own and comes first; `.agents/skills` is upstream's newer
/// location, `.openhands/microagents` its legacy one.
const SKILL_DIRS: &[&str] = &[
    ".tandem/skills",
    ".openhands/skills",
    ".agents/skills",
    ".openhands/microagents",
];

/// Loads the repository context of `workspace`: `AGENTS.md` (or `agents.md`), `CLAUDE.md` (or
/// `claude.md`) and `.cursorrules` as always-on skills, then the `*.md` files of
/// `.tandem/skills`, `.openhands/skills`, `.agents/skills` and the legacy
/// `.openhands/microagents`, whose frontmatter decides always-on versus keyword.
///
/// Returns the skills in a deterministic order and the warnings for files that were skipped,
/// truncated or shadowed by an earlier skill of the same name. A missing workspace or folder is
/// not a warning.
pub fn load_workspace_skills(workspace: &Path) -> (Vec<Skill>, Vec<String>) {
    let mut loader = Loader {
        workspace,
        skills: Vec::new(),
        warnings: Vec::new(),
    };

    for (candidates, name) in ROOT_FILES {
        let found = candidates
            .iter()
            .map(|c| workspace.join(c))
            .find(|p| p.is_file());
        if let Some(path) = found {
            loader.load_file(&path, name, true);
        }
    }

    for dir in SKILL_DIRS {
        let dir = workspace.join(dir);
        for path in loader.markdown_files(&dir) {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            loader.load_file(&path, &stem, false);
        }
    }

    (loader.skills, loader.warnings)
}

/// Tandem's home folder, where the CLI, the server and the desktop keep their settings and
/// conversations: `$TANDEM_HOME`, else `~/.tandem`; `None` without either. The one definition
/// (the server's settings loader turns `None` into its error).
pub fn tandem_home() -> Option<PathBuf> {
    std::env::var_os("TANDEM_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|h| h.join(".tandem")))
}

/// The folder of the user's own skills: `skills` in [`tandem_home`].
pub fn user_skills_dir() -> Option<PathBuf> {
    Some(tandem_home()?.join("skills"))
}

/// Loads the `*.md` skills of the user's skill folder `dir` (see [`user_skills_dir`]), sorted
/// by file name, with warnings naming the files skipped as [`load_workspace_skills`] does. A
/// missing folder is no skills and no warning.
pub fn load_user_skills(dir: &Path) -> (Vec<Skill>, Vec<String>) {
    // Shown by their full path: they are not in the workspace.
    let mut loader = Loader {
        workspace: Path::new(""),
        skills: Vec::new(),
        warnings: Vec::new(),
    };
    for path in loader.markdown_files(dir) {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        loader.load_file(&path, &stem, false);
    }
    (loader.skills, loader.warnings)
}

struct Loader<'a> {
    workspace: &'a Path,
    skills: Vec<Skill>,
    warnings: Vec<String>,
}

impl Loader<'_> {
    /// The path as the person knows it: relative to the workspace when inside it.
    fn display(&self, path: &Path) -> String {
        path.strip_prefix(self.workspace)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The `*.md` files directly in `dir`, sorted by name; `README.md` is documentation of the
    /// folder, not a skill, and is skipped.
    fn markdown_files(&mut self, dir: &Path) -> Vec<PathBuf> {
        if !dir.is_dir() {
            return Vec::new();
        }
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                let shown = self.display(dir);
                self.warnings
                    .push(format!("skipped {shown}: cannot list it: {e}"));
                return Vec::new();
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md"))
                    && !p
                        .file_name()
                        .is_some_and(|n| n.eq_ignore_ascii_case("README.md"))
                    && p.is_file()
            })
            .collect();
        files.sort();
        files
    }

    /// Reads and parses one file; `always_on` files ignore any triggers in their frontmatter.
    fn load_file(&mut self, path: &Path, name_hint: &str, always_on: bool) {
        let shown = self.display(path);
        let text = match read_capped(path) {
            Ok((text, None)) => text,
            Ok((text, Some(total))) => {
                self.warnings.push(format!(
                    "{shown} is {total} bytes; only the first {MAX_CONTEXT_FILE_BYTES} are used"
                ));
                format!(
                    "{text}\n\n[... truncated: {shown} is {total} bytes, only the first \
                     {MAX_CONTEXT_FILE_BYTES} are included ...]"
                )
            }
            Err(e) => {
                self.warnings.push(format!("skipped {shown}: {e}"));
                return;
            }
        };
        let mut skill = match Skill::parse_markdown_as(name_hint, &text, Some(path), &shown) {
            Ok(skill) => skill,
            Err(e) => {
                self.warnings.push(format!("skipped {e}"));
                return;
            }
        };
        if always_on {
            skill.triggers.clear();
        }
        if let Some(earlier) = self.skills.iter().find(|s| s.name == skill.name) {
            let earlier_shown = earlier
                .source
                .as_deref()
                .map_or_else(|| earlier.name.clone(), |p| self.display(p));
            self.warnings.push(format!(
                "skipped {shown}: a skill named `{}` was already loaded from {earlier_shown}",
                skill.name
            ));
            return;
        }
        self.skills.push(skill);
    }
}

/// Why a context file is skipped (the text follows `skipped <file>: `).
#[derive(Debug, thiserror::Error)]
enum Unreadable {
    /// Opening or reading it failed.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// It is not UTF-8.
    #[error("not UTF-8 text: {0}")]
    NotUtf8(std::str::Utf8Error),
}

/// Reads at most [`MAX_CONTEXT_FILE_BYTES`] of `path` as UTF-8. Returns the text and, when the
/// file was longer, its full size. A multi-byte character cut by the cap is dropped.
fn read_capped(path: &Path) -> Result<(String, Option<u64>), Unreadable> {
    let file = fs::File::open(path)?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    let cap = MAX_CONTEXT_FILE_BYTES as u64;
    file.take(cap + 1).read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > cap;
    if truncated {
        bytes.truncate(MAX_CONTEXT_FILE_BYTES);
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|e| Unreadable::NotUtf8(e.utf8_error()))?
        }
        Err(e) => return Err(Unreadable::NotUtf8(e.utf8_error())),
    };
    Ok((text, truncated.then_some(total.max(cap + 1))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_a_split_multibyte_character() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.md");
        let mut text = "a".repeat(MAX_CONTEXT_FILE_BYTES - 1);
        text.push('é');
        text.push_str("tail");
        fs::write(&path, &text).unwrap();
        let (read, total) = read_capped(&path).unwrap();
        assert_eq!(read.len(), MAX_CONTEXT_FILE_BYTES - 1);
        assert_eq!(total, Some(text.len() as u64));
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.md");
        fs::write(&path, [b'a', 0xff, b'b']).unwrap();
        assert!(
            read_capped(&path)
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }
}
