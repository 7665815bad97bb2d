//! What can go wrong with a sandbox, each with its cause and what to do about it.

/// A provisioning error. Its message names the cause and the fix.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// No Docker daemon answers.
    #[error(
        "no Docker daemon answers at {host}: {detail}. Start one (as root: `dockerd`, or `bash scripts/docker.sh` in a Tandem checkout) or point DOCKER_HOST at a running daemon"
    )]
    NoDaemon {
        /// Where we looked.
        host: String,
        /// What the connection said.
        detail: String,
    },
    /// The daemon's socket refuses this user.
    #[error(
        "permission denied on the Docker socket {host}: add your user to the `docker` group (then log in again) or run as root"
    )]
    Permission {
        /// The socket.
        host: String,
    },
    /// The image to start does not exist.
    #[error("the image {image} does not exist: build it with `tandem sandbox build`")]
    ImageMissing {
        /// The image.
        image: String,
    },
    /// The base image is missing and cannot be made here.
    #[error("{0}")]
    Base(String),
    /// The host port asked for is taken.
    #[error(
        "port {port} on 127.0.0.1 is already in use: choose another with --port, or leave it out to get a free one"
    )]
    PortTaken {
        /// The port.
        port: u16,
    },
    /// Bad input (a limit, a path).
    #[error("{0}")]
    Invalid(String),
    /// The container stopped before its server answered, or while it was used.
    #[error("the sandbox {id} stopped: {reason}\n--- its last output ---\n{logs}")]
    Died {
        /// The container.
        id: String,
        /// Exit code, out-of-memory kill.
        reason: String,
        /// Its last lines of output.
        logs: String,
    },
    /// The server inside did not answer in time.
    #[error(
        "the sandbox {id} started but its server did not answer /health within {seconds} s\n--- its last output ---\n{logs}"
    )]
    Unhealthy {
        /// The container.
        id: String,
        /// How long we waited.
        seconds: u64,
        /// Its last lines of output.
        logs: String,
    },
    /// The disk filled up.
    #[error(
        "the disk is full ({0}): free space under Docker's data root (`docker system prune`) and try again"
    )]
    DiskFull(String),
    /// The image build failed.
    #[error("building the sandbox image failed: {0}")]
    Build(String),
    /// No such sandbox.
    #[error("no sandbox {0}: `tandem sandbox ls` lists them")]
    NotFound(String),
    /// The start was cancelled (what it had created is removed).
    #[error("the sandbox's start was cancelled")]
    Cancelled,
    /// Anything else the daemon said.
    #[error("Docker: {0}")]
    Docker(String),
    /// Local IO (the build context, a port probe).
    #[error("{what}: {source}")]
    Io {
        /// What we were doing.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl SandboxError {
    /// An IO error while doing `what`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }

    /// Sorts a Docker API error into the error a person can act on: the connection's own IO
    /// error decides, however deep the HTTP client wrapped it.
    pub(crate) fn from_docker(host: &str, e: bollard::errors::Error) -> Self {
        use bollard::errors::Error as E;
        let text = chain(&e);
        if text.contains("no space left on device") {
            return Self::DiskFull(text);
        }
        match io_kind(&e) {
            Some(std::io::ErrorKind::PermissionDenied) => {
                return Self::Permission {
                    host: host.to_owned(),
                };
            }
            Some(
                std::io::ErrorKind::NotFound
                | std::io::ErrorKind::ConnectionRefused
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::TimedOut,
            ) => {
                return Self::NoDaemon {
                    host: host.to_owned(),
                    detail: text,
                };
            }
            _ => {}
        }
        match e {
            E::DockerResponseServerError { message, .. } => Self::Docker(message),
            E::SocketNotFoundError(_) | E::IOError { .. } | E::RequestTimeoutError => {
                Self::NoDaemon {
                    host: host.to_owned(),
                    detail: text,
                }
            }
            _ => Self::Docker(text),
        }
    }
}

/// The error and its causes, outermost first.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        cause = c.source();
    }
    out
}

/// The kind of the first IO error in `e`'s causes.
fn io_kind(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("client error (Connect)")]
    struct Wrapped(#[source] std::io::Error);

    #[test]
    fn the_io_error_under_the_http_client_decides() {
        let e = Wrapped(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(io_kind(&e), Some(std::io::ErrorKind::PermissionDenied));
        assert!(chain(&e).starts_with("client error (Connect): "));
        let plain = std::fmt::Error;
        assert_eq!(io_kind(&plain), None);
    }
}
