//! What the model reads about `glob`: upstream's description, naming the working directory.

use std::path::Path;

use tandem_protocol::{GlobAction, GlobObservation};
use tandem_sdk::ToolDefinition;

/// The name the model calls.
pub const NAME: &str = "glob";

const DESCRIPTION: &str = r#"Fast file pattern matching tool.
* Supports glob patterns like "**/*.js" or "src/**/*.ts"
* Use this tool when you need to find files by name patterns
* Returns matching file paths sorted by modification time
* Only the first 100 results are returned. Consider narrowing your search with stricter glob patterns or provide path parameter if you need more results.

Examples:
- Find all JavaScript files: "**/*.js"
- Find TypeScript files in src: "src/**/*.ts"
- Find Python test files: "**/test_*.py"
- Find configuration files: "**/*.{json,yaml,yml,toml}"
"#;

/// The tool definition for an agent working in `working_dir`.
pub fn definition(working_dir: &Path) -> ToolDefinition {
    let description = format!(
        "{DESCRIPTION}\n\nYour current working directory is: {}\nWhen searching for files, \
         patterns are relative to this directory.",
        working_dir.display()
    );
    ToolDefinition::typed::<GlobAction, GlobObservation>(
        NAME,
        description,
        crate::finish::definition::READ_ONLY,
        false,
    )
}
