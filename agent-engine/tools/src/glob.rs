//! The `glob` tool: files whose path matches a glob pattern, newest first, at most 100, as
//! upstream's `rg --files -g PATTERN --sortr=modified` lists them (see [`crate::walk`]).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use tandem_protocol::{Content, GlobAction, GlobObservation};
use tandem_sdk::{ToolContext, ToolDefinition, TypedTool};
use tokio_util::sync::CancellationToken;

use crate::walk::{self, CANCELLED, Cancelled, MAX_RESULTS, NamePattern};

pub mod definition;

pub use definition::NAME;

/// The glob tool.
#[derive(Debug)]
pub struct GlobTool {
    definition: ToolDefinition,
}

impl GlobTool {
    /// The tool for an agent working in `working_dir` (its description names the directory).
    pub fn new(working_dir: &Path) -> Self {
        Self {
            definition: definition::definition(working_dir),
        }
    }
}

impl TypedTool for GlobTool {
    type Input = GlobAction;
    type Output = GlobObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn run<'a>(
        &'a self,
        input: &'a GlobAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, GlobObservation> {
        Box::pin(glob(input.clone(), ctx.working_dir, ctx.cancel))
    }
}

/// Runs `input` in the workspace `working_dir`; a failure is an error observation.
pub async fn glob(
    input: GlobAction,
    working_dir: PathBuf,
    cancel: CancellationToken,
) -> GlobObservation {
    let (given_dir, pattern) = match input.path.as_deref() {
        Some(path) if !path.trim().is_empty() => (Some(path.to_owned()), input.pattern.clone()),
        _ => split_absolute(&input.pattern),
    };
    let search_path = match walk::search_dir(given_dir.as_deref(), &working_dir) {
        Ok(dir) => dir,
        Err(message) => {
            let shown = given_dir.unwrap_or_else(|| working_dir.display().to_string());
            return failure(&input, shown, message.to_string());
        }
    };
    let shown_dir = search_path.display().to_string();
    let matcher = match NamePattern::new(&pattern) {
        Ok(matcher) => matcher,
        Err(message) => return failure(&input, shown_dir, message.to_string()),
    };
    let walk_cancel = cancel.clone();
    let dir = search_path.clone();
    let walk = tokio::task::spawn_blocking(move || {
        walk::files(&dir, Some(&matcher), &walk_cancel).map(walk::newest)
    });
    let result = tokio::select! {
        joined = walk => joined.unwrap_or(Err(Cancelled)),
        () = cancel.cancelled() => Err(Cancelled),
    };
    let Ok((files, truncated)) = result else {
        return failure(&input, shown_dir, CANCELLED.to_owned());
    };
    let text = if files.is_empty() {
        format!(
            "No files found matching pattern '{}' in directory '{shown_dir}'",
            input.pattern
        )
    } else {
        let mut text = format!(
            "Found {} file(s) matching pattern '{}' in '{shown_dir}':\n{}",
            files.len(),
            input.pattern,
            files.join("\n")
        );
        if truncated {
            text.push_str(&truncation_note());
        }
        text
    };
    GlobObservation {
        content: vec![Content::text(text)],
        is_error: false,
        files,
        pattern: input.pattern,
        search_path: shown_dir,
        truncated,
        extra: Default::default(),
    }
}

/// The note after a list cut at [`MAX_RESULTS`] (upstream's words).
pub(crate) fn truncation_note() -> String {
    format!(
        "\n\n[Results truncated to first {MAX_RESULTS} files. Consider using a more specific \
         pattern.]"
    )
}

/// An absolute pattern (`/workspace/src/**/*.rs`) as the directory before its first wildcard
/// and the pattern below it; a relative one as is. An empty pattern lists every file.
fn split_absolute(pattern: &str) -> (Option<String>, String) {
    if pattern.trim().is_empty() {
        return (None, "**/*".to_owned());
    }
    if !pattern.starts_with('/') {
        return (None, pattern.to_owned());
    }
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let fixed = parts
        .iter()
        .take_while(|p| !p.contains(['*', '?', '[', '{']))
        .count();
    let dir = format!("/{}", parts[..fixed].join("/"));
    let rest = if fixed == parts.len() {
        "**/*".to_owned()
    } else {
        parts[fixed..].join("/")
    };
    (Some(dir), rest)
}

fn failure(input: &GlobAction, search_path: String, message: String) -> GlobObservation {
    GlobObservation {
        content: vec![Content::text(message)],
        is_error: true,
        files: Vec::new(),
        pattern: input.pattern.clone(),
        search_path,
        truncated: false,
        extra: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::split_absolute;

    #[test]
    fn absolute_patterns_split_at_the_first_wildcard() {
        assert_eq!(
            split_absolute("/w/src/**/*.rs"),
            (Some("/w/src".to_owned()), "**/*.rs".to_owned())
        );
        assert_eq!(
            split_absolute("/w/src"),
            (Some("/w/src".to_owned()), "**/*".to_owned())
        );
        assert_eq!(
            split_absolute("/*.rs"),
            (Some("/".to_owned()), "*.rs".to_owned())
        );
        assert_eq!(split_absolute("src/*.rs"), (None, "src/*.rs".to_owned()));
        assert_eq!(split_absolute(""), (None, "**/*".to_owned()));
    }
}
