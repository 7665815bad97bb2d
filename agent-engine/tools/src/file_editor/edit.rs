//! The commands that change files: `create`, `str_replace`, `insert` and `undo_edit`.
//!
//! Each records the previous content in the [`FileHistory`] before writing, and reports the
//! whole old and new content so the UI can render a diff.

use std::path::Path;

use super::Outcome;
use super::error::EditorError;
use super::history::FileHistory;
use super::text::{self, SNIPPET_CONTEXT_LINES};

/// `create`: writes a new file, making missing parent directories.
pub fn create(
    real: &Path,
    shown: &str,
    file_text: Option<&str>,
    history: &mut FileHistory,
) -> Result<Outcome, EditorError> {
    let file_text = file_text.ok_or_else(|| EditorError::missing("file_text", "create"))?;
    if std::fs::symlink_metadata(real).is_ok() {
        return Err(EditorError::invalid(
            "path",
            shown,
            format!(
                "File already exists at: {shown}. Cannot overwrite files using command `create`."
            ),
        ));
    }
    // What is made here belongs to the agent's user (the workspace's owner in a sandbox, where
    // the server is another user), like the files its commands make.
    let made: Vec<&Path> = real.ancestors().take_while(|a| !a.exists()).collect();
    if let Some(parent) = real.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| EditorError::io("create the folder", parent, &e))?;
    }
    text::write_text(real, file_text)?;
    if let Some(user) = crate::agent_user::agent_user() {
        made.iter().rev().for_each(|p| user.adopt(p));
    }
    history.record(real, None);
    Ok(Outcome {
        text: format!("File created successfully at: {shown}"),
        prev_exist: false,
        old_content: None,
        new_content: Some(file_text.to_owned()),
    })
}

/// `str_replace`: replaces the single occurrence of `old_str` with `new_str`.
///
/// As upstream does, when `old_str` does not occur verbatim but does once its surrounding
/// whitespace is trimmed, the trimmed strings are used.
pub fn str_replace(
    real: &Path,
    shown: &str,
    old_str: Option<&str>,
    new_str: Option<&str>,
    max_size: u64,
    history: &mut FileHistory,
) -> Result<Outcome, EditorError> {
    let old_str = old_str.ok_or_else(|| EditorError::missing("old_str", "str_replace"))?;
    let new_str = new_str.unwrap_or_default();
    if old_str.is_empty() {
        return Err(EditorError::invalid(
            "old_str",
            "``",
            "No replacement was performed. `old_str` must not be empty; to add text use `insert`.",
        ));
    }
    if new_str == old_str {
        return Err(EditorError::invalid(
            "new_str",
            new_str,
            "No replacement was performed. `new_str` and `old_str` must be different.",
        ));
    }
    let content = text::read_text(real, shown, max_size)?;
    let (old_str, new_str, found) = match occurrences(&content, old_str) {
        found if !found.is_empty() => (old_str, new_str, found),
        _ => {
            let trimmed = old_str.trim();
            let found = if trimmed.is_empty() {
                Vec::new()
            } else {
                occurrences(&content, trimmed)
            };
            if found.is_empty() {
                return Err(EditorError::other(format!(
                    "No replacement was performed, old_str `{old_str}` did not appear verbatim in {shown}."
                )));
            }
            (trimmed, new_str.trim(), found)
        }
    };
    if found.len() > 1 {
        let mut lines: Vec<usize> = found.iter().map(|&at| line_of(&content, at)).collect();
        lines.dedup();
        let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
        return Err(EditorError::other(format!(
            "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines [{}]. \
             Please ensure it is unique.",
            lines.join(", ")
        )));
    }
    let at = found[0];
    let new_content = format!(
        "{}{new_str}{}",
        &content[..at],
        &content[at + old_str.len()..]
    );
    text::write_text(real, &new_content)?;
    history.record(real, Some(content.clone()));

    let line = line_of(&content, at);
    let first = line.saturating_sub(SNIPPET_CONTEXT_LINES) + 1;
    let last = line + SNIPPET_CONTEXT_LINES + new_str.matches('\n').count();
    let snippet = text::snippet(&new_content, first, last, &format!("a snippet of {shown}"));
    Ok(Outcome {
        text: format!(
            "The file {shown} has been edited. {snippet}Review the changes and make sure they are \
             as expected. Edit the file again if necessary."
        ),
        prev_exist: true,
        old_content: Some(content),
        new_content: Some(new_content),
    })
}

/// `insert`: puts `new_str` after line `insert_line` (0 = top).
///
/// The inserted text always ends a line: a missing final newline is added to it, and to the
/// file's last line when inserting after it.
pub fn insert(
    real: &Path,
    shown: &str,
    insert_line: Option<i64>,
    new_str: Option<&str>,
    max_size: u64,
    history: &mut FileHistory,
) -> Result<Outcome, EditorError> {
    let insert_line = insert_line.ok_or_else(|| EditorError::missing("insert_line", "insert"))?;
    let new_str = new_str.ok_or_else(|| EditorError::missing("new_str", "insert"))?;
    let content = text::read_text(real, shown, max_size)?;
    let num_lines = text::line_count(&content);
    let after = usize::try_from(insert_line)
        .ok()
        .filter(|&n| n <= num_lines)
        .ok_or_else(|| {
            EditorError::invalid(
                "insert_line",
                insert_line,
                format!("It should be within the range of allowed values: [0, {num_lines}]"),
            )
        })?;

    let mut lines: Vec<&str> = content.split_inclusive('\n').collect();
    let mut inserted = new_str.to_owned();
    if !inserted.ends_with('\n') {
        inserted.push('\n');
    }
    let mut new_content = String::with_capacity(content.len() + inserted.len() + 1);
    for line in lines.drain(..after) {
        new_content.push_str(line);
    }
    if !new_content.is_empty() && !new_content.ends_with('\n') {
        new_content.push('\n');
    }
    new_content.push_str(&inserted);
    for line in lines {
        new_content.push_str(line);
    }
    text::write_text(real, &new_content)?;
    history.record(real, Some(content.clone()));

    let inserted_lines = text::line_count(&inserted);
    let first = after.saturating_sub(SNIPPET_CONTEXT_LINES) + 1;
    let last = (after + SNIPPET_CONTEXT_LINES + inserted_lines).min(num_lines + inserted_lines);
    let snippet = text::snippet(&new_content, first, last, "a snippet of the edited file");
    Ok(Outcome {
        text: format!(
            "The file {shown} has been edited. {snippet}Review the changes and make sure they are \
             as expected (correct indentation, no duplicate lines, etc). Edit the file again if \
             necessary."
        ),
        prev_exist: true,
        old_content: Some(content),
        new_content: Some(new_content),
    })
}

/// `undo_edit`: restores the content `real` had before the last edit (removing it when that
/// edit created it).
pub fn undo(
    real: &Path,
    shown: &str,
    max_size: u64,
    history: &mut FileHistory,
) -> Result<Outcome, EditorError> {
    let current = text::read_text(real, shown, max_size)?;
    let previous = history
        .pop(real)
        .ok_or_else(|| EditorError::other(format!("No edit history found for {shown}.")))?;
    match previous {
        Some(previous) => {
            if let Err(err) = text::write_text(real, &previous) {
                history.record(real, Some(previous));
                return Err(err);
            }
            Ok(Outcome {
                text: format!(
                    "Last edit to {shown} undone successfully. {}",
                    text::cat_n(previous.lines(), shown, 1)
                ),
                prev_exist: true,
                old_content: Some(current),
                new_content: Some(previous),
            })
        }
        None => {
            if let Err(err) = std::fs::remove_file(real) {
                history.record(real, None);
                return Err(EditorError::io("remove", real, &err));
            }
            Ok(Outcome {
                text: format!(
                    "Last edit to {shown} undone successfully. The file did not exist before it \
                     was created, so it has been removed."
                ),
                prev_exist: true,
                old_content: Some(current),
                new_content: None,
            })
        }
    }
}

/// Byte offsets of the non-overlapping occurrences of `needle`.
fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    haystack.match_indices(needle).map(|(at, _)| at).collect()
}

/// The 1-based line holding byte offset `at`.
fn line_of(content: &str, at: usize) -> usize {
    content[..at].matches('\n').count() + 1
}
