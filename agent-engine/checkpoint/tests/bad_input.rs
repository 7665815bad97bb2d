//! A full disk and a read-only part of the workspace: a clear error naming the cause, nothing
//! of the person's lost, and the store works again once the cause is gone. The file systems are
//! real tmpfs mounts (the tests need root, as the rest of the suite's set-up does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use tandem_checkpoint::{RecordLog, RewindTarget, Store};
use tandem_protocol::api::{CheckpointAuthor, RewindFiles};

/// A tmpfs mounted at a path, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .expect("mount runs");
        assert!(
            out.status.success(),
            "mounting a tmpfs (the test needs root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self(at.to_path_buf())
    }

    fn remount(&self, options: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn random_file(path: &Path, bytes: usize) {
    let out = Command::new("head")
        .args(["-c", &bytes.to_string(), "/dev/urandom"])
        .output()
        .unwrap();
    std::fs::write(path, out.stdout).unwrap();
}

#[test]
fn a_disk_that_fills_during_a_checkpoint_is_named_and_the_store_recovers() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let full = Mount::tmpfs(&home, "256k");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("small.txt"), "small").unwrap();
    let store = Store::open(&home, &ws).unwrap();
    random_file(&ws.join("big.bin"), 2_000_000);
    let before = std::fs::read(ws.join("big.bin")).unwrap();

    let err = store.take("with a full disk").unwrap_err().to_string();
    assert!(
        err.to_lowercase().contains("no space left on device"),
        "the cause is named: {err}"
    );
    assert_eq!(
        std::fs::read(ws.join("big.bin")).unwrap(),
        before,
        "the workspace is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("small.txt")).unwrap(),
        "small"
    );

    // Room again: the next checkpoint has everything.
    full.remount("size=64m");
    let taken = store.take("with room").unwrap();
    assert!(
        taken.changes.added.contains(&"big.bin".to_owned()),
        "{:?}",
        taken.changes
    );
    drop(store);
}

#[test]
fn a_read_only_part_of_the_workspace_is_named_and_the_rest_restored() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let ro = Mount::tmpfs(&ws.join("mounted"), "1m");
    let home = root.path().join("home");
    let conversation = tempfile::tempdir().unwrap();
    std::fs::write(ws.join("a.txt"), "a1").unwrap();
    std::fs::write(ws.join("mounted/b.txt"), "b1").unwrap();
    let store = Store::open(&home, &ws).unwrap();
    let log = RecordLog::new(conversation.path());
    let first = store.take("before").unwrap();
    log.append(&first, "e0", CheckpointAuthor::Person, None)
        .unwrap();
    std::fs::write(ws.join("a.txt"), "a2").unwrap();
    std::fs::write(ws.join("mounted/b.txt"), "b2").unwrap();
    let after = store.take("after").unwrap();
    log.append(
        &after,
        "e1",
        CheckpointAuthor::Agent,
        Some("terminal".into()),
    )
    .unwrap();
    ro.remount("ro");

    let events = ["e0".to_owned(), "e1".to_owned()];
    let done = tandem_checkpoint::rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Event("e0".into()),
        RewindFiles::Agent,
        false,
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a1");
    assert_eq!(
        std::fs::read_to_string(ws.join("mounted/b.txt")).unwrap(),
        "b2"
    );
    let restored: Vec<&str> = done.restored.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(restored, ["a.txt"], "{done:?}");
    let skipped = done
        .skipped
        .iter()
        .find(|s| s.path == "mounted/b.txt")
        .unwrap_or_else(|| panic!("the read-only file is named: {done:?}"));
    assert!(
        skipped.reason.contains("Read-only file system"),
        "{skipped:?}"
    );
    assert!(
        !store.dir().join("restore.json").exists(),
        "no journal left to replay"
    );

    // Writable again: the same rewind finishes the job, and undoing gets a2 back.
    ro.remount("rw");
    let again = tandem_checkpoint::rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Event("e0".into()),
        RewindFiles::All,
        false,
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("mounted/b.txt")).unwrap(),
        "b1"
    );
    tandem_checkpoint::rewind(
        &store,
        &log,
        &[events.to_vec(), vec![]].concat(),
        &RewindTarget::Checkpoint(done.undo_checkpoint_id.unwrap()),
        RewindFiles::All,
        false,
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a2");
    drop(again);
}
