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

    /// Sorts a Docker API error into the error a person can act on.
    pub(crate) fn from_docker(host: &str, e: bollard::errors::Error) -> Self {
        use bollard::errors::Error as E;
        let text = e.to_string();
        if text.contains("no space left on device") {
            return Self::DiskFull(text);
        }
        match e {
            E::DockerResponseServerError { message, .. } => Self::Docker(message),
            E::IOError { err } if err.kind() == std::io::ErrorKind::PermissionDenied => {
                Self::Permission {
                    host: host.to_owned(),
                }
            }
            E::IOError { err } => Self::NoDaemon {
                host: host.to_owned(),
                detail: err.to_string(),
            },
            E::HyperResponseError { .. } | E::SocketNotFoundError(_) => Self::NoDaemon {
                host: host.to_owned(),
                detail: text,
            },
            other => {
                let t = other.to_string();
                if t.contains("Permission denied") {
                    Self::Permission {
                        host: host.to_owned(),
                    }
                } else if t.contains("No such file")
                    || t.contains("Connection refused")
                    || t.contains("error trying to connect")
                {
                    Self::NoDaemon {
                        host: host.to_owned(),
                        detail: t,
                    }
                } else {
                    Self::Docker(t)
                }
            }
        }
    }
}
