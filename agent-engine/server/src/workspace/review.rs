//! Per-hunk review of the workspace's changes (Tandem): a person rejects one hunk of the diff
//! against the baseline; that hunk alone is taken back out of the file on disk (the rest of
//! the file keeps the agent's changes) and the agent is told, in a message it reads at its
//! next step, which hunk was rejected and why. Accepting needs nothing on disk.

use std::path::Path;

use similar::{DiffOp, TextDiff};

use crate::error::{ApiError, Result};

/// Longest reason a person can give, in characters.
pub const MAX_REASON_CHARS: usize = 4000;

/// The file's text with `hunk` (as the unified diff from `old` to `new` shows it) reverted,
/// or `None` when the diff has no such hunk (the file changed since it was shown).
pub fn revert_hunk(old: &str, new: &str, hunk: &str) -> Option<String> {
    let diff = TextDiff::from_lines(old, new);
    let unified = diff.unified_diff();
    let wanted = hunk.trim_end_matches('\n');
    let found = unified
        .iter_hunks()
        .find(|h| h.to_string().trim_end_matches('\n') == wanted)?;
    let rejected: Vec<(usize, usize)> = found
        .ops()
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| (op.old_range().start, op.new_range().start))
        .collect();
    let mut out = String::with_capacity(new.len());
    for op in diff.ops() {
        let key = (op.old_range().start, op.new_range().start);
        if !matches!(op, DiffOp::Equal { .. }) && rejected.contains(&key) {
            op.old_range()
                .filter_map(|i| diff.old_slice(i))
                .for_each(|l| out.push_str(l));
        } else {
            op.new_range()
                .filter_map(|i| diff.new_slice(i))
                .for_each(|l| out.push_str(l));
        }
    }
    Some(out)
}

/// The message the agent reads about a rejected hunk.
pub fn agent_message(path: &str, hunk: &str, reason: Option<&str>) -> String {
    let reason = match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!("Reason: {r}"),
        None => "No reason was given.".to_owned(),
    };
    format!(
        "I reviewed your changes and rejected this hunk of `{path}`; it is reverted on disk (the rest of the file keeps your changes). Do not make this change again without asking.\n```diff\n{}\n```\n{reason}",
        hunk.trim_end_matches('\n')
    )
}

/// The text of `path` now: `""` when it does not exist; 422 when it is not UTF-8 text.
pub fn current_text(path: &Path, shown: &str) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            ApiError::Unprocessable(format!(
                "`{shown}` is not a text file; hunks of binary files cannot be rejected (rewind to a checkpoint instead)"
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ApiError::Internal(format!("reading `{shown}`: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn hunks(old: &str, new: &str) -> Vec<String> {
        TextDiff::from_lines(old, new)
            .unified_diff()
            .iter_hunks()
            .map(|h| h.to_string())
            .collect()
    }

    #[test]
    fn one_hunk_is_reverted_and_the_others_kept() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 20\n", "")
            .replace("line 29\n", "line 29\nadded\n");
        let hs = hunks(&old, &new);
        assert_eq!(hs.len(), 3, "{hs:?}");
        let reverted = revert_hunk(&old, &new, &hs[1]).unwrap();
        assert_eq!(
            reverted,
            old.replace("line 2\n", "line two\n")
                .replace("line 29\n", "line 29\nadded\n")
        );
        // Each hunk rejected in turn gives back the old text.
        let mut text = new.clone();
        for _ in 0..3 {
            let h = hunks(&old, &text).pop().unwrap();
            text = revert_hunk(&old, &text, &h).unwrap();
        }
        assert_eq!(text, old);
    }

    #[test]
    fn a_hunk_no_longer_in_the_diff_is_none() {
        let old = "a\nb\n";
        let new = "a\nB\n";
        let h = hunks(old, new).remove(0);
        assert!(revert_hunk(old, "a\nC\n", &h).is_none());
        assert!(revert_hunk(old, new, "@@ -9 +9 @@\n-x\n+y\n").is_none());
    }

    #[test]
    fn files_without_a_final_newline_and_whole_new_files() {
        let (old, new) = ("x\ny", "x\nz");
        let h = hunks(old, new).remove(0);
        assert_eq!(revert_hunk(old, new, &h).unwrap(), old);
        let h = hunks("", "new file\n").remove(0);
        assert_eq!(revert_hunk("", "new file\n", &h).unwrap(), "");
    }

    #[test]
    fn the_message_names_the_file_the_hunk_and_the_reason() {
        let m = agent_message("src/a.rs", "@@ -1 +1 @@\n-a\n+b\n", Some(" keep a "));
        assert!(m.contains("`src/a.rs`") && m.contains("-a\n+b") && m.contains("Reason: keep a"));
        assert!(agent_message("p", "@@", None).contains("No reason was given."));
    }
}
