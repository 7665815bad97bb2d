//! The `grep` tool: files whose content matches a regex (case-insensitive), newest first, at
//! most 100, as upstream's `rg -l -i PATTERN --sortr=modified [-g INCLUDE]` lists them. The
//! walk is [`crate::walk`]'s; the content search ([`search`]) reads the newest files first
//! and stops as soon as the answer is certain.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use grep_regex::RegexMatcherBuilder;
use tandem_protocol::{Content, GrepAction, GrepObservation};
use tandem_sdk::{ToolContext, ToolDefinition, TypedTool};
use tokio_util::sync::CancellationToken;

use crate::walk::{self, CANCELLED, Cancelled, NamePattern};

pub mod definition;
mod search;

pub use definition::NAME;

/// The grep tool.
#[derive(Debug)]
pub struct GrepTool {
    definition: ToolDefinition,
}

impl GrepTool {
    /// The tool for an agent working in `working_dir` (its description names the directory).
    pub fn new(working_dir: &Path) -> Self {
        Self {
            definition: definition::definition(working_dir),
        }
    }
}

impl TypedTool for GrepTool {
    type Input = GrepAction;
    type Output = GrepObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn run<'a>(
        &'a self,
        input: &'a GrepAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, GrepObservation> {
        Box::pin(grep(input.clone(), ctx.working_dir, ctx.cancel))
    }
}

/// Runs `input` in the workspace `working_dir`; a failure is an error observation.
pub async fn grep(
    input: GrepAction,
    working_dir: PathBuf,
    cancel: CancellationToken,
) -> GrepObservation {
    let search_path = match walk::search_dir(input.path.as_deref(), &working_dir) {
        Ok(dir) => dir,
        Err(message) => {
            let shown = input
                .path
                .clone()
                .unwrap_or_else(|| working_dir.display().to_string());
            return failure(&input, shown, message.to_string());
        }
    };
    let shown_dir = search_path.display().to_string();
    let matcher = match RegexMatcherBuilder::new()
        .case_insensitive(true)
        .line_terminator(Some(b'\n'))
        .build(&input.pattern)
    {
        Ok(matcher) => matcher,
        Err(e) => return failure(&input, shown_dir, format!("Invalid regex pattern: {e}")),
    };
    let include = match input.include.as_deref().filter(|i| !i.trim().is_empty()) {
        Some(include) => match NamePattern::new(include) {
            Ok(pattern) => Some(pattern),
            Err(message) => return failure(&input, shown_dir, message.to_string()),
        },
        None => None,
    };
    let walk_cancel = cancel.clone();
    let dir = search_path.clone();
    let work = tokio::task::spawn_blocking(move || {
        let mut found = walk::files(&dir, include.as_ref(), &walk_cancel)?;
        walk::sort_newest_first(&mut found);
        let paths: Vec<PathBuf> = found.into_iter().map(|f| f.path).collect();
        let (matching, truncated) = search::first_matching(&paths, &matcher, &walk_cancel)?;
        let shown = matching
            .into_iter()
            .map(|i| paths[i].to_string_lossy().into_owned())
            .collect::<Vec<_>>();
        Ok::<_, Cancelled>((shown, truncated))
    });
    let result = tokio::select! {
        joined = work => joined.unwrap_or(Err(Cancelled)),
        () = cancel.cancelled() => Err(Cancelled),
    };
    let Ok((matches, truncated)) = result else {
        return failure(&input, shown_dir, CANCELLED.to_owned());
    };
    let filtered = input
        .include
        .as_deref()
        .map(|i| format!(" (filtered by '{i}')"))
        .unwrap_or_default();
    let text = if matches.is_empty() {
        format!(
            "No files found containing pattern '{}' in directory '{shown_dir}'{filtered}",
            input.pattern
        )
    } else {
        let mut text = format!(
            "Found {} file(s) containing pattern '{}' in '{shown_dir}'{filtered}:\n{}",
            matches.len(),
            input.pattern,
            matches.join("\n")
        );
        if truncated {
            text.push_str(&crate::glob::truncation_note());
        }
        text
    };
    GrepObservation {
        content: vec![Content::text(text)],
        is_error: false,
        matches,
        pattern: input.pattern.clone(),
        search_path: shown_dir,
        include_pattern: input.include.clone(),
        truncated,
        extra: Default::default(),
    }
}

fn failure(input: &GrepAction, search_path: String, message: String) -> GrepObservation {
    GrepObservation {
        content: vec![Content::text(message)],
        is_error: true,
        matches: Vec::new(),
        pattern: input.pattern.clone(),
        search_path,
        include_pattern: input.include.clone(),
        truncated: false,
        extra: Default::default(),
    }
}
