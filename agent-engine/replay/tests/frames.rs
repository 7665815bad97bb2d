//! The browser lane: frames listed against the event clock, screencast frames deduplicated, a
//! missing image or a damaged line named and skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tandem_replay::frames::{FrameKind, FrameWriter, frame_at, read_log};

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("e{i}")).collect()
}

#[test]
fn the_frame_as_of_an_event_is_the_newest_at_or_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let events = ids(10);
    let mut w = FrameWriter::open(dir.path()).unwrap();
    let a = w
        .write(
            b"jpeg-a",
            "http://127.0.0.1/a",
            Some("e2"),
            FrameKind::Action,
        )
        .unwrap()
        .unwrap();
    // The same image again right away: a screencast frame is skipped, an action frame listed
    // with the image shared.
    assert!(
        w.write(
            b"jpeg-a",
            "http://127.0.0.1/a",
            Some("e3"),
            FrameKind::Screencast
        )
        .unwrap()
        .is_none()
    );
    let again = w
        .write(
            b"jpeg-a",
            "http://127.0.0.1/a",
            Some("e4"),
            FrameKind::Action,
        )
        .unwrap()
        .unwrap();
    assert_eq!(again.file, a.file);
    let b = w
        .write(
            b"jpeg-b",
            "http://127.0.0.1/b",
            Some("e6"),
            FrameKind::Action,
        )
        .unwrap()
        .unwrap();
    let live = w
        .write(
            b"jpeg-c",
            "http://127.0.0.1/b",
            Some("e7"),
            FrameKind::Screencast,
        )
        .unwrap()
        .unwrap();
    assert!(
        w.write(
            b"jpeg-c",
            "http://127.0.0.1/b",
            Some("e7"),
            FrameKind::Screencast
        )
        .unwrap()
        .is_none(),
        "the same screencast image twice"
    );
    drop(w);

    let mut notes = Vec::new();
    assert!(frame_at(dir.path(), &events, 1, &mut notes).is_none());
    assert_eq!(
        frame_at(dir.path(), &events, 2, &mut notes).unwrap().id,
        a.id
    );
    assert_eq!(
        frame_at(dir.path(), &events, 3, &mut notes).unwrap().id,
        a.id
    );
    assert_eq!(
        frame_at(dir.path(), &events, 5, &mut notes).unwrap().id,
        again.id
    );
    assert_eq!(
        frame_at(dir.path(), &events, 9, &mut notes).unwrap().id,
        live.id
    );
    assert!(notes.is_empty(), "{notes:?}");

    // Reopened, the numbering goes on.
    let mut w = FrameWriter::open(dir.path()).unwrap();
    let next = w
        .write(
            b"jpeg-e",
            "http://127.0.0.1/e",
            Some("e8"),
            FrameKind::Action,
        )
        .unwrap()
        .unwrap();
    assert!(next.id > live.id, "{} after {}", next.id, live.id);
    drop(w);

    // A missing image: the frame before it, and a note.
    std::fs::remove_file(dir.path().join(&live.file)).unwrap();
    let mut notes = Vec::new();
    assert_eq!(
        frame_at(dir.path(), &events, 7, &mut notes).unwrap().id,
        b.id
    );
    assert!(notes[0].contains(&live.id), "{notes:?}");

    // A damaged line is skipped and named; the others still serve.
    let log = dir.path().join("browser.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.insert_str(0, "{not json\n");
    text.push_str("{\"id\": \"f9\", \"cut");
    std::fs::write(&log, text).unwrap();
    let (frames, notes) = read_log(dir.path());
    assert_eq!(frames.len(), 5);
    assert_eq!(notes.len(), 2, "{notes:?}");
    let mut notes = Vec::new();
    assert_eq!(
        frame_at(dir.path(), &events, 2, &mut notes).unwrap().id,
        a.id
    );
}
