//! The UI build embedded in this binary by `build.rs` (from `ui/dist` at compile time), and
//! the page served in its place when the binary was built without one.

/// One file of the embedded build.
#[derive(Debug)]
pub struct EmbeddedFile {
    /// Its path in the build, `/`-separated (`index.html`, `assets/index-3f2a.js`).
    pub path: &'static str,
    /// Whether `bytes` are gzipped (else they are the file as it is).
    pub gzip: bool,
    /// A strong ETag of the file's content.
    pub etag: &'static str,
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
