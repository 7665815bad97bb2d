//! Replay benchmark, terminal and browser lanes, on a scripted two-hour-equivalent session:
//! 10,000 events over two PTYs (an agent's build-and-test loop and a person's shell, with
//! colours, full-screen programs and resizes) and 5,000 browser frames.
//!
//! Prints: recording cost (CPU seconds and % of one core per hour of activity, bytes per hour
//! with the index), seek latency p50/p95 to random events (the REST route's work: the markers
//! read, the keyframe found, the stretch replayed), the same seeks as asciinema would do them
//! (the cast alone, replayed from its start: asciicast has no keyframes), and the frame lookup.
//!
//! `cargo bench -p tandem-replay --bench replay` (`BENCH_EVENTS=10000`)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU16;
use std::path::Path;
use std::time::{Duration, Instant};

use tandem_replay::frames::{FrameKind, FrameWriter, frame_at};
use tandem_replay::{CastWriter, markers, screen_at};

#[path = "support/session.rs"]
mod session;
use session::{Lcg, output};

/// Session length the recording stands for.
const HOURS: f64 = 2.0;
const SEEK_GOAL_MS: f64 = 150.0;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap()
}

/// asciinema's seek: the cast replayed from its first line up to the marker.
fn seek_from_start(cast: &Path, id: &str) -> usize {
    let text = std::fs::read_to_string(cast).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let cols = header["term"]["cols"].as_u64().unwrap() as u16;
    let rows = header["term"]["rows"].as_u64().unwrap() as u16;
    let mut vt = vt100::Parser::new(nz(rows), nz(cols), 0);
    for line in lines {
        let (_, code, data): (f64, String, String) = serde_json::from_str(line).unwrap();
        match code.as_str() {
            "o" => vt.process(data.as_bytes()),
            "r" => {
                let (c, r) = data.split_once('x').unwrap();
                vt.set_size(nz(r.parse().unwrap()), nz(c.parse().unwrap()));
            }
            "m" if data == id => break,
            _ => {}
        }
    }
    vt.screen().contents().len()
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

fn main() {
    let events: usize = std::env::var("BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().unwrap();
    let conversation = dir.path().join("conversation");
    let replay = conversation.join("replay");
    std::fs::create_dir_all(&replay).unwrap();
    let agent_cast = replay.join("agent-0000000000001-1.cast");
    let shell_cast = replay.join("shell-0000000000001-2.cast");
    let mut rng = Lcg(11);
    let mut agent = CastWriter::create(&agent_cast, 160, 48, &["sk-bench-secret".into()]).unwrap();
    let mut shell = CastWriter::create(&shell_cast, 120, 40, &["sk-bench-secret".into()]).unwrap();
    let ids: Vec<String> = (0..events).map(|i| format!("event-{i:06}")).collect();

    // Recording: the writers' own work, as the terminal's pump does it (reads of up to 4 KiB).
    let mut produced = 0usize;
    let mut recording = Duration::ZERO;
    for (i, id) in ids.iter().enumerate() {
        let person = i % 5 == 4;
        let text = output(&mut rng, i, person);
        produced += text.len();
        let start = Instant::now();
        let writer = if person { &mut shell } else { &mut agent };
        for chunk in text.as_bytes().chunks(4096) {
            writer.output(chunk).unwrap();
        }
        if person && i % 50 == 4 {
            writer.input("ls -la\r").unwrap();
        }
        if i % 997 == 0 {
            writer
                .resize(100 + (i % 60) as u16, 30 + (i % 18) as u16)
                .unwrap();
        }
        agent.marker(id).unwrap();
        shell.marker(id).unwrap();
        agent.flush().unwrap();
        shell.flush().unwrap();
        recording += start.elapsed();
    }
    drop(agent);
    drop(shell);
    let cast_bytes = file_size(&agent_cast) + file_size(&shell_cast);
    let index_bytes = file_size(&tandem_replay::cast::index_path(&agent_cast))
        + file_size(&tandem_replay::cast::index_path(&shell_cast));
    println!(
        "session: {events} events, 2 PTYs, {:.1} MB of terminal output, standing for {HOURS} h",
        produced as f64 / 1e6
    );
    println!(
        "terminal recording: {:.2} s CPU in all = {:.3}% of one core per hour; {:.1} MB/h (casts {:.1} MB + index {:.1} MB over {HOURS} h)",
        recording.as_secs_f64(),
        recording.as_secs_f64() / (HOURS * 3600.0) * 100.0,
        (cast_bytes + index_bytes) as f64 / 1e6 / HOURS,
        cast_bytes as f64 / 1e6,
        index_bytes as f64 / 1e6,
    );
    println!(
        "size against asciinema (the same cast, no index): {:.2}x",
        (cast_bytes + index_bytes) as f64 / cast_bytes as f64
    );

    // Seeks: the route's work for a random event of the agent's terminal.
    let mut seeks = Vec::new();
    let mut replayed = 0u64;
    for _ in 0..400 {
        let id = &ids[rng.below(events as u64) as usize];
        let start = Instant::now();
        let (marked, _) = markers(&agent_cast).unwrap();
        assert!(marked.iter().any(|m| m == id));
        let seek = screen_at(&agent_cast, id).unwrap();
        seeks.push(start.elapsed().as_secs_f64() * 1000.0);
        replayed += seek.replayed;
    }
    seeks.sort_by(f64::total_cmp);
    let (p50, p95) = (percentile(&seeks, 0.5), percentile(&seeks, 0.95));
    println!(
        "seek (terminal, markers read + keyframe + replay): p50 {p50:.2} ms, p95 {p95:.2} ms (goal p95 <= {SEEK_GOAL_MS} ms: {}); {:.1} KiB replayed per seek",
        if p95 <= SEEK_GOAL_MS { "met" } else { "MISSED" },
        replayed as f64 / 400.0 / 1024.0
    );
    let mut naive = Vec::new();
    for _ in 0..40 {
        let id = &ids[rng.below(events as u64) as usize];
        let start = Instant::now();
        seek_from_start(&agent_cast, id);
        naive.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    naive.sort_by(f64::total_cmp);
    println!(
        "seek as asciinema does it (replay from the start): p50 {:.1} ms, p95 {:.1} ms — {:.0}x / {:.0}x slower",
        percentile(&naive, 0.5),
        percentile(&naive, 0.95),
        percentile(&naive, 0.5) / p50,
        percentile(&naive, 0.95) / p95
    );

    // The browser lane: 5,000 frames (half the events) of 9.4 KB (the median replay frame the
    // browser benchmark measures on real Chromium).
    let frames_dir = replay.clone();
    let mut frames = FrameWriter::open(&frames_dir).unwrap();
    let frame_count = events / 2;
    let mut image = vec![0u8; 9_400];
    let start = Instant::now();
    for n in 0..frame_count {
        image[..8].copy_from_slice(&(n as u64).to_le_bytes());
        frames
            .write(
                &image,
                "http://127.0.0.1:8080/page",
                Some(&ids[n * 2]),
                FrameKind::Action,
            )
            .unwrap();
    }
    let frame_time = start.elapsed();
    drop(frames);
    let mut lookups = Vec::new();
    for _ in 0..200 {
        let at = rng.below(events as u64) as usize;
        let start = Instant::now();
        let mut notes = Vec::new();
        let frame = frame_at(&frames_dir, &ids, at, &mut notes);
        lookups.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(frame.is_some() && notes.is_empty());
    }
    lookups.sort_by(f64::total_cmp);
    let list = file_size(&frames_dir.join("browser.jsonl"));
    let frame_bytes: u64 = std::fs::read_dir(frames_dir.join("frames"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "browser lane: {frame_count} frames written in {:.2} s; list {:.2} MB; frame lookup p50 {:.2} ms, p95 {:.2} ms",
        frame_time.as_secs_f64(),
        list as f64 / 1e6,
        percentile(&lookups, 0.5),
        percentile(&lookups, 0.95)
    );
    println!(
        "all lanes: {:.1} MB/h (terminal {:.1}, browser {:.1} with {} KB frames)",
        (cast_bytes + index_bytes + list + frame_bytes) as f64 / 1e6 / HOURS,
        (cast_bytes + index_bytes) as f64 / 1e6 / HOURS,
        (list + frame_bytes) as f64 / 1e6 / HOURS,
        image.len() / 1000
    );

    // Export: the events (about 1 KB each) and every lane in one trace.
    let events_dir = conversation.join("events");
    std::fs::create_dir_all(&events_dir).unwrap();
    for (i, id) in ids.iter().enumerate() {
        let body = format!(
            "{{\"id\": \"{id}\", \"kind\": \"ObservationEvent\", \"source\": \"environment\", \"observation\": {{\"content\": [{{\"type\": \"text\", \"text\": \"{}\"}}]}}}}",
            "output line ".repeat(60 + i % 40)
        );
        std::fs::write(events_dir.join(format!("event-{i:05}-{id}.json")), body).unwrap();
    }
    std::fs::write(conversation.join("base_state.json"), "{}").unwrap();
    let out = dir.path().join("session.tandem-trace");
    let mask = |t: &str| t.replace("sk-bench-secret", "<secret-hidden>");
    let start = Instant::now();
    let written =
        tandem_replay::trace::export(&conversation, "bench", "/work", None, &mask, &out).unwrap();
    let export_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let opened = tandem_replay::trace::open(&out, &dir.path().join("opened")).unwrap();
    let open_s = start.elapsed().as_secs_f64();
    assert!(opened.notes.is_empty());
    println!(
        "trace export: {} files, {:.1} MB in {export_s:.2} s; opened (extracted) in {open_s:.2} s",
        written.manifest.files,
        written.bytes as f64 / 1e6
    );
}
