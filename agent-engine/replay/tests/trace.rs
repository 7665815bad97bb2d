//! Traces: a conversation's files in one archive and back, masked, with foreign files left
//! out; a damaged, foreign, newer or hostile trace opens what it can or is refused by name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use tandem_replay::ReplayError;
use tandem_replay::trace::{self, Manifest};

const CANARY: &str = "trace-canary-77aa1c";

fn conversation(dir: &Path) {
    std::fs::create_dir_all(dir.join("events")).unwrap();
    std::fs::create_dir_all(dir.join("replay/frames")).unwrap();
    std::fs::write(dir.join("base_state.json"), r#"{"id": "c1"}"#).unwrap();
    std::fs::write(dir.join("meta.json"), "{}").unwrap();
    for n in 0..3 {
        std::fs::write(
            dir.join(format!("events/event-{n:05}-e{n}.json")),
            format!(r#"{{"id": "e{n}", "text": "said {CANARY}"}}"#),
        )
        .unwrap();
    }
    std::fs::write(dir.join("checkpoints.jsonl"), "").unwrap();
    std::fs::write(
        dir.join("replay/agent-1.cast"),
        format!("{{\"version\": 3}}\n[0.1, \"o\", \"{CANARY}\"]\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("replay/frames/f0000001.jpg"),
        [0xFF, 0xD8, 0xFF, 0x00],
    )
    .unwrap();
    // Not part of a trace.
    std::fs::write(dir.join(".eventlog.lock"), "").unwrap();
    std::fs::write(dir.join("tandem_tags.json"), "{}").unwrap();
    std::fs::create_dir_all(dir.join("bash_events")).unwrap();
    std::fs::write(dir.join("bash_events/x.json"), "{}").unwrap();
}

fn export(dir: &Path, out: &Path) {
    let mask = |t: &str| t.replace(CANARY, "<secret-hidden>");
    let written = trace::export(dir, "c1", "/work/ws", None, &mask, out).unwrap();
    assert_eq!(written.manifest.files, 8);
}

#[test]
fn a_trace_holds_the_conversation_masked_and_opens_back() {
    let src = tempfile::tempdir().unwrap();
    conversation(src.path());
    let out = src.path().join("t.tandem-trace");
    export(src.path(), &out);
    let bytes = std::fs::read(&out).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains(CANARY));

    let into = tempfile::tempdir().unwrap();
    let opened = trace::open(&out, into.path()).unwrap();
    assert!(opened.notes.is_empty(), "{:?}", opened.notes);
    assert_eq!(opened.manifest.conversation_id, "c1");
    assert_eq!(opened.manifest.workspace, "/work/ws");
    let c = &opened.conversation_dir;
    assert_eq!(std::fs::read_dir(c.join("events")).unwrap().count(), 3);
    assert_eq!(
        std::fs::read(c.join("replay/frames/f0000001.jpg")).unwrap(),
        [0xFF, 0xD8, 0xFF, 0x00],
        "images as they were"
    );
    assert!(
        std::fs::read_to_string(c.join("replay/agent-1.cast"))
            .unwrap()
            .contains("<secret-hidden>")
    );
    assert!(!c.join(".eventlog.lock").exists());
    assert!(!c.join("tandem_tags.json").exists());
    assert!(!c.join("bash_events").exists());
    assert!(opened.bundle.is_none());
}

#[test]
fn a_damaged_foreign_newer_or_hostile_trace_is_named() {
    let src = tempfile::tempdir().unwrap();
    conversation(src.path());
    let out = src.path().join("t.tandem-trace");
    export(src.path(), &out);
    let bytes = std::fs::read(&out).unwrap();

    // Cut off mid-way: the files before the cut, and a note.
    let cut = src.path().join("cut.tandem-trace");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let into = tempfile::tempdir().unwrap();
    let opened = trace::open(&cut, into.path()).unwrap();
    assert!(!opened.notes.is_empty());
    assert!(into.path().join("conversation/base_state.json").is_file());

    // Not a trace at all.
    let junk = src.path().join("junk");
    std::fs::write(&junk, "hello, not an archive").unwrap();
    let err = trace::open(&junk, into.path()).unwrap_err();
    assert!(matches!(err, ReplayError::NotATrace { .. }), "{err}");

    // A newer version, and an entry that climbs out of the folder.
    let hostile = src.path().join("hostile.tandem-trace");
    let write = |manifest: &Manifest, extra: Option<(&str, &[u8])>| {
        let mut tar = tar::Builder::new(std::fs::File::create(&hostile).unwrap());
        let body = serde_json::to_vec(manifest).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append_data(&mut h, "trace.json", body.as_slice())
            .unwrap();
        if let Some((name, data)) = extra {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            // Written raw: the builder refuses `..` itself.
            let raw = h.as_old_mut();
            raw.name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            tar.append(&h, data).unwrap();
        }
        tar.finish().unwrap();
    };
    let mut manifest = Manifest {
        format: trace::FORMAT.into(),
        version: trace::VERSION + 1,
        conversation_id: "c1".into(),
        exported_at: "2026-11-29T00:00:00Z".into(),
        workspace: "/w".into(),
        files: 1,
    };
    write(&manifest, None);
    let err = trace::open(&hostile, into.path()).unwrap_err();
    assert!(err.to_string().contains("newer"), "{err}");

    manifest.version = trace::VERSION;
    write(&manifest, Some(("conversation/../../escaped.txt", b"out")));
    let into = tempfile::tempdir().unwrap();
    let opened = trace::open(&hostile, into.path()).unwrap();
    assert!(
        opened.notes.iter().any(|n| n.contains("skipped")),
        "{:?}",
        opened.notes
    );
    assert!(!into.path().parent().unwrap().join("escaped.txt").exists());
}
