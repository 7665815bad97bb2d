//! `tandem sandbox build`: the sandbox image from `sandbox-image/` (embedded in this binary, so
//! an installed `tandem` builds it anywhere) and the given `tandem` binary.
//!
//! Offline by default: the Dockerfile starts `FROM tandem-base:bookworm`, a debootstrap minbase
//! rootfs imported into Docker (made here by `build-base.sh` when missing), and installs its
//! packages from Debian's mirror; with a registry, `--base debian:bookworm-slim` works too.
//! The package layer comes before the binary, so a rebuild after a code change reuses it, and a
//! rebuild with nothing changed is all cache.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Instant;

use bollard::body_full;
use bollard::query_parameters::BuildImageOptionsBuilder;
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{DockerProvisioner, IMAGE};
use crate::{OnProgress, Progress, SandboxError};

const DOCKERFILE: &str = include_str!("../../../../sandbox-image/Dockerfile");
const ENTRYPOINT: &str = include_str!("../../../../sandbox-image/entrypoint.sh");
const BUILD_BASE: &str = include_str!("../../../../sandbox-image/build-base.sh");
/// The offline base image `build-base.sh` makes.
pub const BASE_IMAGE: &str = "tandem-base:bookworm";

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The `tandem` binary to put in the image (a Linux build for the image's Debian).
    pub binary: PathBuf,
    /// The image to build `FROM` ([`BASE_IMAGE`], made here when missing, or a registry's
    /// `debian:bookworm-slim`).
    pub base: String,
    /// The tag to give the image.
    pub tag: String,
    /// Ignore Docker's build cache.
    pub no_cache: bool,
}

impl BuildOptions {
    /// The default image from `binary`.
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        Self {
            binary: binary.into(),
            base: BASE_IMAGE.to_owned(),
            tag: IMAGE.to_owned(),
            no_cache: false,
        }
    }
}

/// What a build made.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildReport {
    /// The tag.
    pub tag: String,
    /// The image id.
    pub image_id: String,
    /// The image's size in bytes.
    pub size_bytes: i64,
    /// Every step came from Docker's cache.
    pub cached: bool,
    /// The base image was made by this build (debootstrap).
    pub base_built: bool,
    /// Seconds the build took.
    pub seconds: f64,
}

impl DockerProvisioner {
    /// Builds the sandbox image; progress gets each line of the build.
    pub async fn build(
        &self,
        opts: &BuildOptions,
        progress: OnProgress<'_>,
    ) -> Result<BuildReport, SandboxError> {
        let started = Instant::now();
        let meta = std::fs::metadata(&opts.binary).map_err(|e| {
            SandboxError::Invalid(format!(
                "the tandem binary {} cannot be read: {e}",
                opts.binary.display()
            ))
        })?;
        if !meta.is_file() {
            return Err(SandboxError::Invalid(format!(
                "{} is not a file",
                opts.binary.display()
            )));
        }
        let mut base_built = false;
        if opts.base == BASE_IMAGE && !self.image_exists(BASE_IMAGE).await? {
            self.build_base(progress).await?;
            base_built = true;
        }
        let binary = opts.binary.clone();
        let context = tokio::task::spawn_blocking(move || context_tar(&binary))
            .await
            .map_err(|e| SandboxError::Build(format!("packing the build context: {e}")))??;
        let build = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(&opts.tag)
            .rm(true)
            .forcerm(true)
            .nocache(opts.no_cache)
            // RUN steps reach Debian's mirror through the host's network: daemons without a
            // bridge network have no other.
            .networkmode("host")
            .buildargs(&HashMap::from([("BASE", opts.base.as_str())]))
            .build();
        let mut stream = self
            .docker
            .build_image(build, None, Some(body_full(context.into())));
        let mut steps = Steps::default();
        while let Some(item) = stream.next().await {
            let info = item.map_err(|e| match self.err(e) {
                SandboxError::Docker(m) => build_error(m),
                other => other,
            })?;
            if let Some(detail) = info.error_detail.and_then(|d| d.message) {
                return Err(build_error(detail));
            }
            if let Some(text) = info.stream {
                for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
                    steps.see(line);
                    progress(Progress::Building(line.to_owned()));
                }
            }
        }
        let image = self
            .docker
            .inspect_image(&opts.tag)
            .await
            .map_err(|e| self.err(e))?;
        Ok(BuildReport {
            tag: opts.tag.clone(),
            image_id: image.id.unwrap_or_default(),
            size_bytes: image.size.unwrap_or_default(),
            cached: steps.all_cached(),
            base_built,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Runs `build-base.sh` (debootstrap + `docker import`), forwarding its output.
    async fn build_base(&self, progress: OnProgress<'_>) -> Result<(), SandboxError> {
        progress(Progress::Building(format!(
            "{BASE_IMAGE} is missing: making it with debootstrap (a few minutes, once)"
        )));
        let dir = tempfile_dir()?;
        let script = dir.join("build-base.sh");
        std::fs::write(&script, BUILD_BASE).map_err(SandboxError::io("writing build-base.sh"))?;
        let mut child = tokio::process::Command::new("bash")
            .arg(&script)
            .arg(BASE_IMAGE)
            .env("DOCKER_HOST", &self.host)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(SandboxError::io("starting bash for build-base.sh"))?;
        let mut tail: Vec<String> = Vec::new();
        let out = child.stdout.take();
        let err = child.stderr.take();
        let mut lines = futures::stream::select(
            lines_of(out.map(BufReader::new)),
            lines_of(err.map(BufReader::new)),
        );
        while let Some(line) = lines.next().await {
            if tail.len() == 20 {
                tail.remove(0);
            }
            tail.push(line.clone());
            progress(Progress::Building(line));
        }
        let status = child
            .wait()
            .await
            .map_err(SandboxError::io("waiting for build-base.sh"))?;
        let _ = std::fs::remove_dir_all(&dir);
        if status.success() {
            return Ok(());
        }
        let said = tail.join("\n");
        if said.contains("No space left on device") || said.contains("no space left on device") {
            return Err(SandboxError::DiskFull(said));
        }
        Err(SandboxError::Base(format!(
            "making the base image {BASE_IMAGE} failed ({status}):\n{said}\nWith a registry reachable, build from Debian's image instead: `tandem sandbox build --base debian:bookworm-slim`"
        )))
    }
}

fn lines_of<R: tokio::io::AsyncBufRead + Unpin + Send + 'static>(
    r: Option<R>,
) -> futures::stream::BoxStream<'static, String> {
    match r {
        Some(r) => futures::stream::unfold(r.lines(), |mut l| async move {
            match l.next_line().await {
                Ok(Some(line)) => Some((line, l)),
                _ => None,
            }
        })
        .boxed(),
        None => futures::stream::empty().boxed(),
    }
}

fn tempfile_dir() -> Result<PathBuf, SandboxError> {
    let dir = std::env::temp_dir().join(format!("tandem-base-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).map_err(SandboxError::io("creating a temporary folder"))?;
    Ok(dir)
}

fn build_error(message: String) -> SandboxError {
    if message.contains("no space left on device") {
        SandboxError::DiskFull(message)
    } else {
        SandboxError::Build(message)
    }
}

/// The build context: the Dockerfile, the entrypoint and the binary, with fixed times and
/// owners so that the same inputs give the same context (and Docker's cache hits).
fn context_tar(binary: &std::path::Path) -> Result<Vec<u8>, SandboxError> {
    let bin = std::fs::read(binary).map_err(SandboxError::io(format!(
        "reading the tandem binary {}",
        binary.display()
    )))?;
    let mut tar = tar::Builder::new(Vec::with_capacity(bin.len() + 64 * 1024));
    let files: [(&str, &[u8], u32); 3] = [
        ("Dockerfile", DOCKERFILE.as_bytes(), 0o644),
        ("entrypoint.sh", ENTRYPOINT.as_bytes(), 0o755),
        ("tandem", &bin, 0o755),
    ];
    for (name, data, mode) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_cksum();
        tar.append_data(&mut header, name, data)
            .map_err(SandboxError::io("packing the build context"))?;
    }
    tar.into_inner()
        .map_err(SandboxError::io("packing the build context"))
}

/// Whether each step of the classic builder came from its cache.
#[derive(Debug, Default)]
struct Steps {
    counted: usize,
    cached: usize,
    ran: bool,
}

impl Steps {
    fn see(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("Step ") {
            // `Step 3/12 : RUN ...`: FROM and ARG before it never report a cache hit.
            let instruction = rest.split(" : ").nth(1).unwrap_or("");
            let word = instruction.split_whitespace().next().unwrap_or("");
            if !word.eq_ignore_ascii_case("FROM") && !word.eq_ignore_ascii_case("ARG") {
                self.counted += 1;
            }
        } else if line.contains("Using cache") {
            self.cached += 1;
        } else if line.contains("Running in") {
            self.ran = true;
        }
    }

    fn all_cached(&self) -> bool {
        !self.ran && self.counted > 0 && self.cached >= self.counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_is_cached_when_every_step_used_the_cache() {
        let mut s = Steps::default();
        for l in [
            "Step 1/4 : ARG BASE=tandem-base:bookworm",
            "Step 2/4 : FROM tandem-base:bookworm",
            " ---> 1234",
            "Step 3/4 : RUN apt-get install -y bash",
            " ---> Using cache",
            "Step 4/4 : COPY tandem /usr/local/bin/tandem",
            " ---> Using cache",
        ] {
            s.see(l);
        }
        assert!(s.all_cached());
        s.see("Step 5/5 : COPY entrypoint.sh /x");
        s.see(" ---> 5678");
        assert!(!s.all_cached());
    }

    #[test]
    fn the_context_is_the_same_for_the_same_binary() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("tandem");
        std::fs::write(&bin, b"\x7fELF not really").unwrap();
        assert_eq!(context_tar(&bin).unwrap(), context_tar(&bin).unwrap());
        let missing = context_tar(&dir.path().join("nope")).unwrap_err();
        assert!(missing.to_string().contains("reading the tandem binary"));
    }
}
