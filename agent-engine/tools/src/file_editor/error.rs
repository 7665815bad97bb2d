//! Why a file editor command failed, worded for the model (the texts follow upstream's).

use std::fmt;
use std::path::Path;

/// A failure the model reads as an error observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorError(pub String);

impl EditorError {
    /// A parameter has a value the command cannot use.
    pub fn invalid(parameter: &str, value: impl fmt::Display, hint: impl fmt::Display) -> Self {
        Self(format!("Invalid `{parameter}` parameter: {value}. {hint}"))
    }

    /// A parameter the command needs is absent.
    pub fn missing(parameter: &str, command: &str) -> Self {
        Self(format!(
            "Parameter `{parameter}` is required for command: {command}."
        ))
    }

    /// The file cannot be read or edited by this tool (binary, too large, ...).
    pub fn validation(path: &str, reason: impl fmt::Display) -> Self {
        Self(format!("File validation failed for {path}: {reason}"))
    }

    /// Any other failure, as is.
    pub fn other(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// An I/O failure while reading or writing `path`.
    pub fn io(action: &str, path: &Path, err: &std::io::Error) -> Self {
        Self(format!(
            "Ran into {err} while trying to {action} {}",
            path.display()
        ))
    }
}

impl fmt::Display for EditorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
