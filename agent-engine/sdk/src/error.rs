//! Errors of the engine.

use std::path::PathBuf;

use tandem_protocol::ToolInputError;

/// Result with [`SdkError`].
pub type Result<T> = std::result::Result<T, SdkError>;

/// What went wrong in the engine. Each carries enough to name the culprit.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// A file operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`write`, `read`, `rename`, ...).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A persisted file could not be parsed.
    #[error("corrupt file {path}: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// JSON (de)serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// No conversation with this id.
    #[error("conversation {0} not found")]
    NotFound(String),
    /// The request does not fit the conversation's current state.
    #[error("{0}")]
    InvalidState(String),
    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A prompt template failed to render (a bug in an embedded template).
    #[error("prompt template: {0}")]
    Template(String),
    /// The LLM failed.
    #[error(transparent)]
    Llm(#[from] tandem_llm::LlmError),
    /// A run is already in progress (`run` while running).
    #[error("conversation already running; wait for it to finish or pause it first")]
    AlreadyRunning,
    /// No action with this id waits for confirmation (unknown, already run or rejected).
    #[error("action {0} is not waiting for confirmation")]
    NotPending(String),
    /// Arguments given for an action do not fit its tool; the message names the field.
    #[error(transparent)]
    InvalidArguments(#[from] ToolCallError),
    /// The conversation's actor is gone.
    #[error("the conversation has shut down")]
    Closed,
    /// A conversation on an agent server failed (through
    /// [`ConversationClient`](crate::ConversationClient)); the remote error says what and has
    /// a machine-readable code.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
}

/// Why a tool call (the model's, or one a person edited) cannot become an action. The text is
/// what the model reads as the call's result, so it names the tool and the field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ToolCallError {
    /// The model called a tool the agent does not have.
    #[error("Tool '{name}' not found. Available: [{}]", quoted(available))]
    NotFound {
        /// The name called.
        name: String,
        /// The agent's tools.
        available: Vec<String>,
    },
    /// An edited action's tool is no longer among the conversation's tools.
    #[error("Tool '{0}' is not available in this conversation")]
    NotAvailable(String),
    /// The arguments are JSON, but not an object.
    #[error("Error validating tool '{tool}': arguments must be a JSON object, got {got}")]
    NotAnObject {
        /// The tool called.
        tool: String,
        /// What they are instead (`an array`).
        got: &'static str,
    },
    /// The arguments are not JSON.
    #[error("Error validating tool '{tool}': {source}. Arguments: unparseable JSON")]
    Unparseable {
        /// The tool called.
        tool: String,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// The tool refused the arguments.
    #[error("Error validating tool '{tool}': {source}")]
    Invalid {
        /// The tool called.
        tool: String,
        /// What the tool found wrong, naming the field.
        source: ToolInputError,
    },
}

/// `'a', 'b'`.
fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    quoted.join(", ")
}

impl SdkError {
    /// An IO error about `path`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Why a markdown skill cannot be read. The text names the file (or the skill's name when it
/// has no file) first.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// The frontmatter's opening `---` has no closing one.
    #[error("{origin}: the frontmatter opened with `---` is never closed")]
    UnclosedFrontmatter {
        /// The file, as the person knows it.
        origin: String,
    },
    /// The frontmatter is not valid YAML.
    #[error("{origin}: invalid YAML frontmatter: {source}")]
    Yaml {
        /// The file, as the person knows it.
        origin: String,
        /// The parser's complaint.
        source: serde_norway::Error,
    },
    /// Neither the frontmatter nor the file name gives a name.
    #[error("{origin}: the skill has no name")]
    NoName {
        /// The file, as the person knows it.
        origin: String,
    },
}

/// Why upstream's `AgentContext` JSON cannot be read; the text names the offending field.
#[derive(Debug, thiserror::Error)]
pub enum AgentContextError {
    /// The context is not a JSON object.
    #[error("agent context must be a JSON object, got {0}")]
    NotAnObject(&'static str),
    /// A field has the wrong shape.
    #[error("agent context: {0}")]
    Shape(serde_json::Error),
    /// One of `skills` cannot be read.
    #[error("skills[{index}] ({name}): {problem}")]
    Skill {
        /// Its place in `skills`.
        index: usize,
        /// Its `name`, `?` when it has none.
        name: String,
        /// What is wrong with it.
        problem: SkillJsonError,
    },
    /// Two skills have the same name.
    #[error("skills[{index}]: duplicate skill name `{name}`")]
    DuplicateSkill {
        /// The place of the second in `skills`.
        index: usize,
        /// The name.
        name: String,
    },
}

/// What is wrong with one upstream `Skill` object.
#[derive(Debug, thiserror::Error)]
pub enum SkillJsonError {
    /// A field has the wrong shape.
    #[error(transparent)]
    Shape(#[from] serde_json::Error),
    /// `name` is blank.
    #[error("the skill has no name")]
    NoName,
    /// Its trigger is by path, which Tandem does not support.
    #[error("path-triggered skills are not supported")]
    PathTrigger,
    /// Its trigger type is none upstream knows.
    #[error("unknown trigger type `{0}`")]
    UnknownTrigger(String),
}
