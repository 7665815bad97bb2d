//! Records the replay lanes of a scripted session onto a conversation already on disk, for the
//! UI's replay benchmark (`tests/e2e-ui/bench`): two terminals (the agent's and a person's) with
//! a marker per event, a browser frame every other event (cycling through the JPEG files given),
//! and a checkpoint of the workspace every 20 events after a file changed.
//!
//! `cargo run --release -p tandem-replay --example replay_session -- HOME CONVERSATION_DIR
//! WORKSPACE FRAME.jpg...`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use tandem_checkpoint::{RecordLog, Store};
use tandem_protocol::api::CheckpointAuthor;
use tandem_replay::CastWriter;
use tandem_replay::frames::{FrameKind, FrameWriter};

#[path = "../benches/support/session.rs"]
mod session;
use session::{Lcg, output};

/// The conversation's event ids in their order (`events/event-NNNNN-<id>.json`).
fn event_ids(conversation: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(conversation.join("events"))
        .expect("the conversation's events")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let stem = n.trim_end_matches(".json");
            stem.splitn(3, '-')
                .nth(2)
                .expect("event-NNNNN-<id>.json")
                .to_owned()
        })
        .collect()
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [home, conversation, workspace, images @ ..] = args.as_slice() else {
        eprintln!("usage: replay_session HOME CONVERSATION_DIR WORKSPACE FRAME.jpg...");
        std::process::exit(2);
    };
    assert!(!images.is_empty(), "at least one JPEG frame");
    let images: Vec<Vec<u8>> = images.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let ids = event_ids(conversation);
    let replay = conversation.join("replay");
    std::fs::create_dir_all(&replay).unwrap();

    let mut rng = Lcg(11);
    let mut agent = CastWriter::create(&replay.join("agent-0000000000001-1.cast"), 160, 48, &[])
        .expect("the agent's cast");
    let mut shell = CastWriter::create(&replay.join("shell-0000000000001-2.cast"), 120, 40, &[])
        .expect("the person's cast");
    let mut frames = FrameWriter::open(&replay).expect("the browser lane");
    let store = Store::open(home, workspace).expect("the checkpoint store");
    let records = RecordLog::new(conversation);
    let mut checkpoints = 0;
    for (i, id) in ids.iter().enumerate() {
        let person = i % 5 == 4;
        let text = output(&mut rng, i, person);
        let writer = if person { &mut shell } else { &mut agent };
        for chunk in text.as_bytes().chunks(4096) {
            writer.output(chunk).unwrap();
        }
        agent.marker(id).unwrap();
        shell.marker(id).unwrap();
        if i % 2 == 0 {
            let image = &images[(i / 2) % images.len()];
            let url = format!("http://127.0.0.1:8080/page/{}", (i / 2) % images.len());
            frames
                .write(image, &url, Some(id), FrameKind::Action)
                .unwrap();
        }
        if i % 20 == 19 {
            let file = workspace.join(format!("src/module_{}.rs", (i / 20) % 50));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            let mut body = std::fs::read_to_string(&file).unwrap_or_default();
            for k in 0..(3 + rng.below(20)) {
                body.push_str(&format!(
                    "pub fn step_{i}_{k}() -> u64 {{ {} }}\n",
                    rng.below(1000)
                ));
            }
            std::fs::write(&file, body).unwrap();
            let taken = store.take(&format!("event {id}")).unwrap();
            records
                .append(
                    &taken,
                    id,
                    CheckpointAuthor::Agent,
                    Some("file_editor".into()),
                )
                .unwrap();
            checkpoints += 1;
        }
    }
    agent.flush().unwrap();
    shell.flush().unwrap();
    println!(
        "recorded {} events: 2 terminals, {} browser frames, {checkpoints} checkpoints",
        ids.len(),
        ids.len().div_ceil(2)
    );
}
