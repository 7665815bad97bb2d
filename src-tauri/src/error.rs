//! The desktop host's errors. Those that reach the UI serialise as `{code, message}` so the UI
//! can tell a missing keyring from a bad file without parsing text.

use serde::Serialize;

/// What can go wrong in the desktop host.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The keyring (Secret Service or the fallback file) refused or failed.
    #[error("keyring: {0}")]
    Keyring(String),
    /// A file of the app's config could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A config file is not the JSON it should be.
    #[error("{context}: {source}")]
    Json {
        /// Which file.
        context: String,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The in-process agent server could not start.
    #[error("local backend: {0}")]
    Backend(String),
    /// Tauri itself failed (window, plugin, event loop).
    #[error("tauri: {0}")]
    Tauri(#[from] tauri::Error),
}

impl Error {
    /// A stable, machine-readable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Keyring(_) => "keyring",
            Self::Io { .. } => "io",
            Self::Json { .. } => "bad_json",
            Self::Backend(_) => "backend",
            Self::Tauri(_) => "tauri",
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}

impl Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Error", 2)?;
        st.serialize_field("code", self.code())?;
        st.serialize_field("message", &self.to_string())?;
        st.end()
    }
}

/// Results of the desktop host.
pub type Result<T> = std::result::Result<T, Error>;
