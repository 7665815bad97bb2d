//! The `view` command: a file with line numbers, or a directory two levels deep.

use std::path::Path;

use super::error::EditorError;
use super::text::{self, DIRECTORY_CLIPPED_NOTICE};

/// Shows the file or directory at `real` (`shown` is the path as the model wrote it).
pub fn view(
    real: &Path,
    shown: &str,
    view_range: Option<&[i64]>,
    max_size: u64,
) -> Result<String, EditorError> {
    if real.is_dir() {
        if view_range.is_some_and(|r| !r.is_empty()) {
            return Err(EditorError::invalid(
                "view_range",
                show_range(view_range.unwrap_or_default()),
                "The `view_range` parameter is not allowed when `path` points to a directory.",
            ));
        }
        return Ok(view_directory(real, shown));
    }
    let content = text::read_text(real, shown, max_size)?;
    let Some(range) = view_range.filter(|r| !r.is_empty()) else {
        return Ok(text::cat_n(content.lines(), shown, 1));
    };
    view_range_of(&content, shown, range)
}

/// Lines `range[0]..=range[1]` of `content`, validated the way upstream does.
fn view_range_of(content: &str, shown: &str, range: &[i64]) -> Result<String, EditorError> {
    let [start, end] = range else {
        return Err(EditorError::invalid(
            "view_range",
            show_range(range),
            "It should be a list of two integers.",
        ));
    };
    let (start, end) = (*start, *end);
    let num_lines = text::line_count(content) as i64;
    if start < 1 || start > num_lines {
        return Err(EditorError::invalid(
            "view_range",
            show_range(range),
            format!(
                "Its first element `{start}` should be within the range of lines of the file: \
                 [1, {num_lines}]."
            ),
        ));
    }
    let mut note = None;
    let end = if end == -1 {
        num_lines
    } else if end > num_lines {
        note = Some(format!(
            "NOTE: We only show up to {num_lines} since there're only {num_lines} lines in this \
             file.\n"
        ));
        num_lines
    } else {
        end
    };
    if end < start {
        return Err(EditorError::invalid(
            "view_range",
            show_range(range),
            format!(
                "Its second element `{end}` should be greater than or equal to the first element \
                 `{start}`."
            ),
        ));
    }
    let body = text::snippet(content, start as usize, end as usize, shown);
    Ok(format!("{}{body}", note.unwrap_or_default()))
}

/// A range the way the model wrote it: `[1, 2]`.
fn show_range(range: &[i64]) -> String {
    let items: Vec<String> = range.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The non-hidden entries up to two levels below `real`, sorted, directories marked with `/`.
///
/// Symbolic links are listed but not descended into, so the listing never wanders outside the
/// workspace.
fn view_directory(real: &Path, shown: &str) -> String {
    let base = if shown.len() > 1 {
        shown.trim_end_matches('/')
    } else {
        shown
    };
    let mut entries: Vec<(String, bool)> = vec![(base.to_owned(), true)];
    let mut hidden = 0usize;
    for (name, is_dir, is_link) in children(real) {
        if name.starts_with('.') {
            hidden += 1;
            continue;
        }
        let display = join(base, &name);
        if is_dir && !is_link {
            for (sub, sub_is_dir, _) in children(&real.join(&name)) {
                if !sub.starts_with('.') {
                    entries.push((join(&display, &sub), sub_is_dir));
                }
            }
        }
        entries.push((display, is_dir));
    }
    entries.sort();
    let listing: Vec<String> = entries
        .into_iter()
        .map(|(p, is_dir)| {
            if is_dir && !p.ends_with('/') {
                format!("{p}/")
            } else {
                p
            }
        })
        .collect();
    let mut out = format!(
        "Here's the files and directories up to 2 levels deep in {base}, excluding hidden items:\n{}",
        text::clip(&listing.join("\n"), DIRECTORY_CLIPPED_NOTICE)
    );
    if hidden > 0 {
        out.push_str(&format!(
            "\n\n{hidden} hidden files/directories in this directory are excluded. You can use \
             'ls -la {base}' to see them."
        ));
    }
    out
}

fn join(base: &str, name: &str) -> String {
    if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}

/// `(name, is_dir, is_symlink)` of each entry of `dir`; unreadable entries are skipped.
fn children(dir: &Path) -> Vec<(String, bool, bool)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.flatten()
        .map(|entry| {
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            let is_dir = entry.path().is_dir();
            (
                entry.file_name().to_string_lossy().into_owned(),
                is_dir,
                is_link,
            )
        })
        .collect()
}
