//! Moving a conversation between two `tandem serve` processes on loopback, as `tandem move`
//! does it (export from the source, import on the target into a new folder as arriving, the
//! source fenced, the arrival accepted), back and forth, for a workspace of 1 MB and one of 100 MB (files of random,
//! incompressible bytes, untracked). Prints per size:
//! - move time p50/p95 (export → import → fence) against the goal of 5 s for 100 MB;
//! - the pause-to-running gap (export start → arrival accepted: the gap a person watching sees
//!   between the pause on the source and being able to run it on the target), and the export
//!   and import parts of it;
//! - the capsule's size against the workspace delta (the files; no base is shared, so the
//!   delta is the whole workspace).
//!
//! Run: `cargo bench -p tandem-e2e --bench move` (`BENCH_HOPS=10` hops for 1 MB, a third of
//! that for 100 MB).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_testkit::{ScriptedLlmServer, Step};

const GOAL_100MB_S: f64 = 5.0;

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// `files` files of `each` random bytes under `dir`.
fn fill(dir: &Path, files: usize, each: usize) {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for n in 0..files {
        let mut f =
            std::fs::File::create(dir.join("data").join(format!("blob-{n:04}.bin"))).unwrap();
        let mut buf = vec![0u8; each];
        for chunk in buf.chunks_mut(8) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let bytes = seed.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        f.write_all(&buf).unwrap();
    }
}

/// One file `name` of `bytes` random bytes (seeded by `seed`) in `dir`.
fn fill_one(dir: &Path, name: &str, bytes: usize, seed: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ (seed + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut buf = vec![0u8; bytes];
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    std::fs::write(dir.join(name), buf).unwrap();
}

struct Hop {
    total_s: f64,
    ready_s: f64,
    export_s: f64,
    import_s: f64,
    capsule_bytes: usize,
}

/// One move of conversation `id` from `from` to `to`: into `working_dir`, or (None) back onto
/// the record `to` keeps, with only what changed since it left.
async fn hop(
    http: &reqwest::Client,
    from: &str,
    to: &str,
    id: &str,
    working_dir: Option<&Path>,
) -> Hop {
    let t = Instant::now();
    let base = match working_dir {
        Some(_) => None,
        None => {
            let (status, record) = tandem_e2e::api(
                http,
                reqwest::Method::GET,
                &format!("{to}/api/conversations/{id}/moved"),
                KEY,
                None,
            )
            .await;
            assert_eq!(status, 200, "{record}");
            let base = record["workspace_base"].as_str().map(str::to_owned);
            assert!(base.is_some(), "the target holds no base: {record}");
            base
        }
    };
    let resp = http
        .post(format!("{from}/api/conversations/{id}/export"))
        .header("X-Session-API-Key", KEY)
        .json(&json!({"base_commit": base}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "export: {}", resp.status());
    let capsule = resp.bytes().await.unwrap().to_vec();
    let capsule_bytes = capsule.len();
    let export_s = t.elapsed().as_secs_f64();
    let form = reqwest::multipart::Form::new()
        .part(
            "capsule",
            reqwest::multipart::Part::bytes(capsule).file_name("c.tandem-capsule"),
        )
        .text(
            "options",
            json!({"working_dir": working_dir.map(|d| d.to_string_lossy().into_owned()), "pending": true}).to_string(),
        );
    let resp = http
        .post(format!("{to}/api/conversations/import"))
        .header("X-Session-API-Key", KEY)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or_default();
    assert_eq!(status.as_u16(), 201, "import: {body}");
    let import_s = t.elapsed().as_secs_f64() - export_s;
    let resp = http
        .post(format!("{from}/api/conversations/{id}/moved"))
        .header("X-Session-API-Key", KEY)
        .json(&json!({"url": to, "conversation_id": id, "last_event_id": body["last_event_id"]}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "moved: {}", resp.status());
    let resp = http
        .post(format!("{to}/api/conversations/{id}/arrival"))
        .header("X-Session-API-Key", KEY)
        .json(&json!({"accept": true}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "arrival: {}", resp.status());
    // What a person sees: the conversation paused here, then runnable there.
    let ready_s = t.elapsed().as_secs_f64();
    Hop {
        total_s: t.elapsed().as_secs_f64(),
        ready_s,
        export_s,
        import_s,
        capsule_bytes,
    }
}

fn main() {
    let hops: usize = std::env::var("BENCH_HOPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let bin = tandem_e2e::tandem_bin().unwrap_or_else(|e| panic!("{e:#}"));
    println!(
        "move benchmark ({}): two tandem serve on loopback, a conversation moved back and forth",
        bin.display()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::new();
    for (label, files, each, runs) in [
        ("1 MB", 100, 10 * 1024, hops),
        ("100 MB", 100, 1024 * 1024, hops.div_ceil(3).max(2)),
    ] {
        let llm = ScriptedLlmServer::start(
            tandem_testkit::Script::new(vec![
                Step::tool_call("terminal", json!({"command": "ls data | wc -l"})),
                Step::tool_call("finish", json!({"message": "counted"})),
            ])
            .with_no_tools_text("Count the data"),
        );
        let dir = tempfile::tempdir().unwrap();
        let a = TandemServer::start(&dir.path().join("a"), &[]).unwrap();
        let b = TandemServer::start(&dir.path().join("b"), &[]).unwrap();
        let ws = dir.path().join("ws");
        fill(&ws, files, each);
        let mut config = LlmConfig::new("openai/fake");
        config.base_url = Some(llm.base_url());
        config.api_key = Some("x".into());
        config.num_retries = 0;
        let create = json!({
            "agent": AgentSpec::default_for(config),
            "workspace": {"kind": "LocalWorkspace", "working_dir": ws.to_string_lossy()},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": "count"}], "run": true},
        });
        let mut back = Vec::new();
        let (totals, readies, capsule, mut exports, mut imports) = rt.block_on(async {
            let (status, info) = tandem_e2e::api(
                &http,
                reqwest::Method::POST,
                &format!("{}/api/conversations", a.url),
                KEY,
                Some(create),
            )
            .await;
            assert_eq!(status, 201, "{info}");
            let id = info["id"].as_str().unwrap().to_owned();
            loop {
                let (_, info) = tandem_e2e::api(
                    &http,
                    reqwest::Method::GET,
                    &format!("{}/api/conversations/{id}", a.url),
                    KEY,
                    None,
                )
                .await;
                if info["execution_status"] == "finished" {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            let (mut totals, mut readies, mut capsule) = (Vec::new(), Vec::new(), 0);
            let (mut exports, mut imports) = (Vec::new(), Vec::new());
            for n in 0..runs * 2 {
                let (from, to) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
                let target_dir = dir.path().join(format!("hop-{n}"));
                let h = hop(&http, &from.url, &to.url, &id, Some(&target_dir)).await;
                totals.push(h.total_s);
                readies.push(h.ready_s);
                exports.push(h.export_s);
                imports.push(h.import_s);
                capsule = h.capsule_bytes;
            }
            // Back and forth onto the records each side keeps, 1% of the workspace new each
            // time (as if the agent had written it).
            let (mut back_totals, mut back_capsules) = (Vec::new(), Vec::new());
            for n in 0..runs * 2 {
                let (from, to) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
                let (_, info) = tandem_e2e::api(
                    &http,
                    reqwest::Method::GET,
                    &format!("{}/api/conversations/{id}", from.url),
                    KEY,
                    None,
                )
                .await;
                let here = Path::new(info["workspace"]["working_dir"].as_str().unwrap()).to_owned();
                fill_one(&here, &format!("new-{n}.bin"), files * each / 100, n as u64);
                let h = hop(&http, &from.url, &to.url, &id, None).await;
                back_totals.push(h.total_s);
                back_capsules.push(h.capsule_bytes as f64);
            }
            back.push((back_totals, back_capsules));
            (totals, readies, capsule, exports, imports)
        });
        let workspace = (files * each) as f64;
        let (mut totals, mut readies) = (totals, readies);
        let p50 = percentile(&mut totals, 0.5);
        let p95 = percentile(&mut totals, 0.95);
        let ready50 = percentile(&mut readies, 0.5);
        let ready95 = percentile(&mut readies, 0.95);
        println!(
            "\n{label} workspace ({files} files of random bytes), {} hops",
            runs * 2
        );
        println!("  move (export → import → fence): p50 {p50:.2} s, p95 {p95:.2} s");
        if label == "100 MB" {
            println!(
                "  goal ≤ {GOAL_100MB_S} s for 100 MB: {} (ratio {:.2})",
                if p95 <= GOAL_100MB_S { "met" } else { "MISSED" },
                p95 / GOAL_100MB_S
            );
        }
        println!(
            "  of which export p50 {:.2} s, import (upload, check, write, flush) p50 {:.2} s",
            percentile(&mut exports, 0.5),
            percentile(&mut imports, 0.5)
        );
        println!(
            "  pause-to-running gap (paused on the source → runnable on the target): p50 {ready50:.2} s, p95 {ready95:.2} s"
        );
        println!(
            "  capsule {:.2} MB against a workspace delta of {:.2} MB (no base shared: all of it): {:.2}×",
            capsule as f64 / 1e6,
            workspace / 1e6,
            capsule as f64 / workspace
        );
        if let Some((mut back_totals, mut back_capsules)) = back.pop() {
            let delta = (files * each / 100) as f64;
            let b50 = percentile(&mut back_totals, 0.5);
            let b95 = percentile(&mut back_totals, 0.95);
            println!(
                "  moved back onto its record, 1% new ({:.2} MB) each time: p50 {b50:.2} s, p95 {b95:.2} s{}",
                delta / 1e6,
                if label == "100 MB" {
                    format!(
                        " ({} the 5 s goal, ratio {:.2})",
                        if b95 <= GOAL_100MB_S {
                            "meets"
                        } else {
                            "MISSES"
                        },
                        b95 / GOAL_100MB_S
                    )
                } else {
                    String::new()
                }
            );
            println!(
                "  its capsule p50 {:.2} MB against that delta: {:.2}×",
                percentile(&mut back_capsules, 0.5) / 1e6,
                percentile(&mut back_capsules, 0.5) / delta
            );
        }
        drop(a);
        drop(b);
    }
}
