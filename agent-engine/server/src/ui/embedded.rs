//! The UI build embedded in this binary by `build.rs` (from `ui/dist` at compile time), the
//! [`Backend`] through which `ServeDir` serves it from memory, and the page served in its
//! place when the binary was built without one.

use std::borrow::Cow;
use std::future::{Ready, ready};
use std::io::{self, Cursor, Read, SeekFrom};
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};
use tower_http::services::fs;

/// One file of the embedded build.
#[derive(Debug)]
pub struct EmbeddedFile {
    /// Its path in the build, `/`-separated (`index.html`, `assets/index-3f2a.js`).
    pub path: &'static str,
    /// Whether `bytes` are gzipped (else they are the file as it is).
    pub gzip: bool,
    /// When it was last changed in the build, since the Unix epoch: its `Last-Modified`, and
    /// with its size its ETag.
    pub modified: Duration,
    /// The stored bytes.
    pub bytes: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/embedded_ui.rs"));

/// The file at `path` in the embedded build.
pub fn find(path: &str) -> Option<&'static EmbeddedFile> {
    FILES
        .binary_search_by(|f| f.path.cmp(path))
        .ok()
        .and_then(|i| FILES.get(i))
}

/// Whether this binary was built with a UI.
pub fn present() -> bool {
    find("index.html").is_some()
}

/// What the binary holds: files, bytes of the build, bytes stored (gzipped where smaller).
pub fn stats() -> (usize, u64, u64) {
    (FILES.len(), RAW_BYTES, STORED_BYTES)
}

/// The embedded build as `ServeDir` reads it: each file as it is in the build (unpacked when it
/// is stored gzipped) and, for a file stored gzipped, the stored bytes as `{path}.gz`, which
/// `ServeDir::precompressed_gzip` sends to clients that take gzip.
#[derive(Debug, Clone, Copy, Default)]
pub struct Backend;

/// What a path names in the embedded build.
#[derive(Debug, Clone, Copy)]
enum Entry {
    Dir,
    /// A file, as built or (`packed`) as stored gzipped.
    File {
        file: &'static EmbeddedFile,
        packed: bool,
    },
}

impl Entry {
    /// `path` as `ServeDir` asks for it: `./` and the request's path, already checked for `..`.
    fn find(path: &Path) -> Option<Self> {
        let parts: Option<Vec<&str>> = path
            .components()
            .filter(|c| !matches!(c, Component::CurDir | Component::RootDir))
            .map(|c| match c {
                Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect();
        let rel = parts?.join("/");
        if let Some(file) = find(&rel) {
            return Some(Self::File {
                file,
                packed: false,
            });
        }
        if let Some(file) = rel.strip_suffix(".gz").and_then(find).filter(|f| f.gzip) {
            return Some(Self::File { file, packed: true });
        }
        let dir = rel.is_empty()
            || FILES.iter().any(|f| {
                f.path
                    .strip_prefix(rel.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            });
        dir.then_some(Self::Dir)
    }

    fn metadata(self) -> Metadata {
        match self {
            Self::Dir => Metadata {
                dir: true,
                len: 0,
                modified: None,
            },
            Self::File { file, packed } => Metadata {
                dir: false,
                len: if file.gzip && !packed {
                    unpacked_len(file.bytes)
                } else {
                    file.bytes.len() as u64
                },
                modified: Some(UNIX_EPOCH + file.modified),
            },
        }
    }
}

/// The size a gzip stream records in its last four bytes (modulo 4 GiB; UI files are far
/// smaller).
fn unpacked_len(gz: &[u8]) -> u64 {
    gz.last_chunk::<4>()
        .map_or(0, |b| u64::from(u32::from_le_bytes(*b)))
}

/// The gzipped `bytes` unpacked.
pub(super) fn gunzip(bytes: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

fn not_found() -> io::Error {
    io::Error::from(io::ErrorKind::NotFound)
}

/// What `ServeDir` learns of an embedded file or folder.
#[derive(Debug, Clone, Copy)]
pub struct Metadata {
    dir: bool,
    len: u64,
    modified: Option<SystemTime>,
}

impl fs::Metadata for Metadata {
    fn is_dir(&self) -> bool {
        self.dir
    }

    fn modified(&self) -> io::Result<SystemTime> {
        self.modified.ok_or_else(not_found)
    }

    fn len(&self) -> u64 {
        self.len
    }
}

/// An embedded file opened for reading.
#[derive(Debug)]
pub struct File {
    bytes: Cursor<Cow<'static, [u8]>>,
    metadata: Metadata,
}

impl AsyncRead for File {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.bytes).poll_read(cx, buf)
    }
}

impl AsyncSeek for File {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        Pin::new(&mut self.bytes).start_seek(position)
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Pin::new(&mut self.bytes).poll_complete(cx)
    }
}

impl fs::File for File {
    type Metadata = Metadata;
    type MetadataFuture<'a> = Ready<io::Result<Metadata>>;

    fn metadata(&self) -> Self::MetadataFuture<'_> {
        ready(Ok(self.metadata))
    }
}

impl fs::Backend for Backend {
    type File = File;
    type Metadata = Metadata;
    type OpenFuture = Ready<io::Result<File>>;
    type MetadataFuture = Ready<io::Result<Metadata>>;

    fn open(&self, path: PathBuf) -> Self::OpenFuture {
        let Some(Entry::File { file, packed }) = Entry::find(&path) else {
            return ready(Err(not_found()));
        };
        let bytes = if file.gzip && !packed {
            match gunzip(file.bytes) {
                Ok(b) => Cow::Owned(b),
                Err(e) => {
                    tracing::warn!("the embedded UI file {} does not unpack: {e}", file.path);
                    return ready(Err(e));
                }
            }
        } else {
            Cow::Borrowed(file.bytes)
        };
        let metadata = Metadata {
            len: bytes.len() as u64,
            ..Entry::File { file, packed }.metadata()
        };
        ready(Ok(File {
            bytes: Cursor::new(bytes),
            metadata,
        }))
    }

    fn metadata(&self, path: PathBuf) -> Self::MetadataFuture {
        ready(
            Entry::find(&path)
                .map(Entry::metadata)
                .ok_or_else(not_found),
        )
    }
}

/// The page `/ui/` serves when the binary has no UI built in.
pub const MISSING_PAGE: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tandem: no web UI in this build</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em}code,pre{background:#8882;padding:.1em .3em;border-radius:3px}</style>
</head>
<body>
<h1>This Tandem was built without its web UI</h1>
<p>The agent server is running and its API answers; only the browser UI is missing, because
<code>ui/dist</code> did not exist when this <code>tandem</code> binary was compiled.</p>
<p>To put the UI in the binary, build the UI and then tandem, from the checkout:</p>
<pre>npm ci
npm run -w ui build
cargo build --release --bin tandem</pre>
<p>Or point <code>TANDEM_UI_DIR</code> at a UI build (a folder with <code>index.html</code>)
when starting <code>tandem serve</code>.</p>
</body>
</html>
"#;
