//! What the model reads about `grep`: upstream's description, naming the working directory.

use std::path::Path;

use tandem_protocol::{GrepAction, GrepObservation};
use tandem_sdk::ToolDefinition;

/// The name the model calls.
pub const NAME: &str = "grep";

const DESCRIPTION: &str = r#"Fast content search tool.
* Searches file contents using regular expressions
* Supports full regex syntax (eg. "log.*Error", "function\s+\w+", etc.)
* Filter files by pattern with the include parameter (eg. "*.js", "*.{ts,tsx}")
* Returns matching file paths sorted by modification time.
* Only the first 100 results are returned. Consider narrowing your search with stricter regex patterns or provide path parameter if you need more results.
* Use this tool when you need to find files containing specific patterns.
"#;

/// The tool definition for an agent working in `working_dir`.
pub fn definition(working_dir: &Path) -> ToolDefinition {
    let description = format!(
        "{DESCRIPTION}\n\nYour current working directory is: {}\nWhen searching for content, \
         searches are performed in this directory.",
        working_dir.display()
    );
    ToolDefinition::typed::<GrepAction, GrepObservation>(
        NAME,
        description,
        crate::finish::definition::READ_ONLY,
        false,
    )
}
