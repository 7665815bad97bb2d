#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

const CANARY: &str = "sk-capsule-canary-0042";

fn conversation(dir: &Path, events: usize) {
    std::fs::create_dir_all(dir.join("events")).unwrap();
    std::fs::write(
        dir.join("base_state.json"),
        format!(r#"{{"id":"c0ffee","agent":{{"mcp_config":{{"env":{{"TOKEN":"{CANARY}"}}}}}}}}"#),
    )
    .unwrap();
    std::fs::write(dir.join("meta.json"), r#"{"id":"c0ffee"}"#).unwrap();
    for i in 0..events {
        std::fs::write(
            dir.join("events").join(format!("event-{i:05}-id{i}.json")),
            format!(r#"{{"id":"id{i}","n":{i}}}"#),
        )
        .unwrap();
    }
    std::fs::write(dir.join("events/.eventlog.lock"), "").unwrap();
    std::fs::write(dir.join("checkpoints.jsonl"), "{}\n").unwrap();
    std::fs::create_dir_all(dir.join("replay")).unwrap();
    std::fs::write(dir.join("replay/agent-1-1.cast"), "cast").unwrap();
    std::fs::create_dir_all(dir.join("browser-profile/Default")).unwrap();
    std::fs::write(
        dir.join("browser-profile/Default/Cookies"),
        "secret cookies",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("bash_events")).unwrap();
    std::fs::write(dir.join("bash_events/x.json"), "{}").unwrap();
    std::fs::write(dir.join(MOVED_FILE), "{}").unwrap();
}

fn manifest() -> Manifest {
    Manifest {
        format: String::new(),
        version: 0,
        conversation_id: "c0ffee".into(),
        title: Some("A title".into()),
        exported_at: String::new(),
        source_url: Some("http://127.0.0.1:1".into()),
        workspace: Some(WorkspaceRef {
            commit: "c".repeat(40),
            tree: "t".repeat(40),
            source_dir: "/work".into(),
            base: None,
        }),
        llm: LlmRef {
            model: "openai/gpt".into(),
            base_url: None,
            profile: Some("work".into()),
        },
        secrets: vec!["GITHUB_TOKEN".into()],
        redacted: vec![],
        terminal: None,
        browser: None,
        replay: false,
    }
}

fn redact(rel: &Path, bytes: Vec<u8>) -> Vec<u8> {
    if rel == Path::new("base_state.json") {
        String::from_utf8(bytes)
            .unwrap()
            .replace(CANARY, "<redacted>")
            .into_bytes()
    } else {
        bytes
    }
}

/// Exports a conversation of `events` events (with a bundle) into `tmp`; the capsule's path.
fn exported(tmp: &Path, events: usize, replay: bool) -> (PathBuf, Exported) {
    let dir = tmp.join("conv");
    conversation(&dir, events);
    let bundle = tmp.join("ws.bundle");
    std::fs::write(&bundle, b"bundle bytes").unwrap();
    let mut m = manifest();
    m.replay = replay;
    let out = tmp.join("c.tandem-capsule");
    let written = export(
        ExportInput {
            manifest: m,
            conversation_dir: &dir,
            bundle: Some(&bundle),
            transform: &redact,
        },
        &out,
    )
    .unwrap();
    (out, written)
}

#[test]
fn a_capsule_round_trips_its_files_byte_for_byte_and_leaves_the_right_ones_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, written) = exported(tmp.path(), 12, false);
    assert_eq!(written.sums.events, 12);
    assert_eq!(written.sums.last_event_id.as_deref(), Some("id11"));
    assert_eq!(written.manifest.format, FORMAT);
    let raw = std::fs::read(&out).unwrap();
    assert!(
        !String::from_utf8_lossy(&raw).contains(CANARY),
        "credentials stay behind"
    );
    assert!(!String::from_utf8_lossy(&raw).contains("secret cookies"));

    let into = tmp.path().join("opened");
    let opened = open(&out, &into).unwrap();
    assert_eq!(opened.manifest, written.manifest);
    assert_eq!(opened.sums, written.sums);
    assert_eq!(manifest_of(&out), written.manifest);
    let src = tmp.path().join("conv");
    for i in 0..12 {
        let rel = format!("events/event-{i:05}-id{i}.json");
        assert_eq!(
            std::fs::read(src.join(&rel)).unwrap(),
            std::fs::read(opened.conversation_dir.join(&rel)).unwrap()
        );
    }
    assert_eq!(
        std::fs::read(opened.bundle.unwrap()).unwrap(),
        b"bundle bytes"
    );
    let base = std::fs::read_to_string(opened.conversation_dir.join("base_state.json")).unwrap();
    assert!(base.contains("<redacted>"), "{base}");
    for gone in [
        "replay",
        "browser-profile",
        "bash_events",
        MOVED_FILE,
        "events/.eventlog.lock",
    ] {
        assert!(!opened.conversation_dir.join(gone).exists(), "{gone}");
    }
    assert!(opened.conversation_dir.join("checkpoints.jsonl").is_file());

    // Asked for, the replay lanes come along.
    let tmp2 = tempfile::tempdir().unwrap();
    let (out, _) = exported(tmp2.path(), 3, true);
    let opened = open(&out, &tmp2.path().join("opened")).unwrap();
    assert!(opened.manifest.replay);
    assert!(
        opened
            .conversation_dir
            .join("replay/agent-1-1.cast")
            .is_file()
    );
}

fn manifest_of(path: &Path) -> Manifest {
    super::manifest(path).unwrap()
}

/// Cut at any point of its entries, a capsule is refused: never a partial conversation.
#[test]
fn a_truncated_capsule_is_refused_wherever_it_is_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = exported(tmp.path(), 20, false);
    let bytes = std::fs::read(&out).unwrap();
    let cut_file = tmp.path().join("cut.tandem-capsule");
    // Past the last entry come only the archive's two zero blocks: cut anywhere before them.
    let content = bytes.len() - 1024;
    assert!(bytes[content..].iter().all(|b| *b == 0));
    let step = (content / 97).max(1);
    let mut cut = 0;
    while cut < content {
        std::fs::write(&cut_file, &bytes[..cut]).unwrap();
        let into = tmp.path().join(format!("cut-{cut}"));
        let err = open(&cut_file, &into).expect_err(&format!("cut at {cut} of {}", bytes.len()));
        let text = err.to_string();
        assert!(
            text.contains("not a Tandem capsule") || text.contains("damaged"),
            "cut at {cut}: {text}"
        );
        cut += step;
    }
}

#[test]
fn a_changed_byte_a_foreign_file_and_a_newer_version_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = exported(tmp.path(), 5, false);
    let bytes = std::fs::read(&out).unwrap();

    // A byte of an event changed.
    let needle = br#"{"id":"id3","n":3}"#;
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    let mut flipped = bytes.clone();
    flipped[at + 16] = b'9';
    let file = tmp.path().join("flipped.tandem-capsule");
    std::fs::write(&file, &flipped).unwrap();
    let err = open(&file, &tmp.path().join("f")).unwrap_err().to_string();
    assert!(
        err.contains("event-00003-id3.json does not match its checksum"),
        "{err}"
    );

    // Not a capsule at all.
    let junk = tmp.path().join("junk");
    std::fs::write(&junk, "hello").unwrap();
    let err = open(&junk, &tmp.path().join("j")).unwrap_err().to_string();
    assert!(err.contains("not a Tandem capsule"), "{err}");

    // A newer version, whatever else its manifest says.
    let newer = tmp.path().join("newer.tandem-capsule");
    let mut tar = tar::Builder::new(File::create(&newer).unwrap());
    let body = br#"{"format":"tandem-capsule","version":99,"something_new":{}}"#;
    let mut header = tar::Header::new_gnu();
    header.set_size(body.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, MANIFEST, &body[..]).unwrap();
    tar.finish().unwrap();
    drop(tar);
    let err = open(&newer, &tmp.path().join("n")).unwrap_err().to_string();
    assert!(
        err.contains("version 99, newer than this Tandem reads"),
        "{err}"
    );
    let err = super::manifest(&newer).unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
}

#[test]
fn an_entry_outside_the_capsule_or_one_added_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = exported(tmp.path(), 2, false);
    // Rebuild the archive with one more entry before the sums.
    let mut archive = tar::Archive::new(File::open(&out).unwrap());
    let mut entries: Vec<(String, Vec<u8>)> = archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut b = Vec::new();
            e.read_to_end(&mut b).unwrap();
            (name, b)
        })
        .collect();
    let sums = entries.pop().unwrap();
    for (extra, expect) in [
        ("conversation/../escaped.txt", "is not a file of a capsule"),
        ("elsewhere.txt", "is not a file of a capsule"),
        ("conversation/added.json", "is not in its checksums"),
    ] {
        let file = tmp.path().join("extra.tandem-capsule");
        let mut tar = tar::Builder::new(File::create(&file).unwrap());
        for (name, body) in entries
            .iter()
            .chain([(extra.to_owned(), b"x".to_vec())].iter())
            .chain([sums.clone()].iter())
        {
            let mut header = tar::Header::new_gnu();
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            // `append_data` refuses `..`; write the name into the header as a hostile tool would.
            header.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            tar.append(&header, &body[..]).unwrap();
        }
        tar.finish().unwrap();
        drop(tar);
        let into = tmp.path().join("x");
        let _ = std::fs::remove_dir_all(&into);
        let err = open(&file, &into).unwrap_err().to_string();
        assert!(err.contains(expect), "{extra}: {err}");
        assert!(!tmp.path().join("escaped.txt").exists());
    }
}
