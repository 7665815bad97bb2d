//! The checked-in fixtures (`tests/fixtures/` at the repository's root), and copies of them a
//! test may change.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The conversation directories upstream's agent server wrote (read-only in the checkout).
pub fn upstream_conversations() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/upstream/conversations")
}

/// Copies `from` into `to` recursively, everything writable (the fixtures are read-only).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644))?;
        }
    }
    Ok(())
}
