//! Real bash for the tests, with no system git config and `HOME` in the test's folder.

use std::path::Path;
use std::process::Command;

/// Runs `script` with `bash -e` in `dir`; its stdout. Panics with its stderr when it fails.
pub fn bash(dir: &Path, script: &str) -> String {
    let out = Command::new("bash")
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
