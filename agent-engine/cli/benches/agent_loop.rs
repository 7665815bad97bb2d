//! The 100-step benchmark: a conversation whose scripted, zero-latency LLM answers
//! `terminal {"command": "echo i"}` for i = 0..99 and then `finish`, run through the real
//! engine (persisted event log, real bash on a PTY, the OpenAI client over loopback HTTP).
//! Prints ms per agent step against upstream 1.58's 253–315 ms (anchor-numbers.md), without
//! and with checkpoints around every action (the workspace's store, and the folders outside
//! it watched), and the difference: what checkpointing costs a step.
//!
//! `cargo bench -p tandem-cli --bench agent_loop`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_llm::{Llm, OpenAiChat};
use tandem_protocol::{AgentSpec, Event, ExecutionStatus, LlmConfig, Message};
use tandem_sdk::{Conversation, ConversationOptions, ConversationStore, Runtime};
use tandem_testkit::{ScriptedLlmServer, Step};

const STEPS: usize = 100;
const REPS: usize = 3;
const ANCHOR_LOW_MS: f64 = 253.0;
const ANCHOR_HIGH_MS: f64 = 315.0;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let median = reps(&rt, false);
    let with_checkpoints = reps(&rt, true);
    println!();
    println!("100-step run, scripted zero-latency LLM, terminal `echo i` per step ({REPS} reps)");
    println!("  ms per step: median {median:.2}");
    println!(
        "  anchor (upstream 1.58): {ANCHOR_LOW_MS}–{ANCHOR_HIGH_MS} ms per step → {:.0}×–{:.0}× faster (median)",
        ANCHOR_LOW_MS / median,
        ANCHOR_HIGH_MS / median
    );
    println!(
        "  target ≤ 10 ms per step: {}",
        if median <= 10.0 { "met" } else { "NOT met" }
    );
    println!(
        "  with checkpoints around every action: median {with_checkpoints:.2} ms per step → checkpointing costs {:.2} ms per step ({:+.0}%)",
        with_checkpoints - median,
        (with_checkpoints / median - 1.0) * 100.0
    );
}

/// The median ms per step over [`REPS`] runs.
fn reps(rt: &tokio::runtime::Runtime, checkpoints: bool) -> f64 {
    let mut per_step = Vec::new();
    for rep in 0..REPS {
        let (ms, tool, between) = rt.block_on(one_run(checkpoints));
        println!(
            "rep {} (checkpoints {}): {:.2} ms per step (action→observation median {:.2} ms, observation→next action median {:.2} ms)",
            rep + 1,
            if checkpoints { "on" } else { "off" },
            ms,
            tool,
            between
        );
        per_step.push(ms);
    }
    per_step.sort_by(f64::total_cmp);
    per_step[per_step.len() / 2]
}

async fn one_run(checkpoints: bool) -> (f64, f64, f64) {
    let server = ScriptedLlmServer::with_responder(Arc::new(|_req, i| {
        if i < STEPS {
            Step::tool_call("terminal", json!({"command": format!("echo {i}")}))
        } else {
            Step::tool_call("finish", json!({"message": "done"}))
        }
    }));
    server.set_no_tools_text("Echo benchmark");
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let store = ConversationStore::new(home.path().join("conversations"));
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(server.base_url());
    config.api_key = Some("x".into());
    let llm: Arc<dyn Llm> = Arc::new(OpenAiChat::new(config.clone()).unwrap());
    let runtime = Runtime {
        llm,
        tools: tandem_tools::default_tools(None),
        checkpoints: checkpoints.then(|| {
            let store = tandem_checkpoint::Store::open(home.path(), workspace.path()).unwrap();
            store.watch_outside(tandem_checkpoint::outside::default_roots());
            store
        }),
        run_gate: None,
    };
    let options = ConversationOptions::new(
        AgentSpec::default_for(config),
        workspace.path().to_path_buf(),
    );
    let handle = Conversation::create(&store, options, runtime)
        .await
        .unwrap();
    let started = Instant::now();
    handle
        .send_message(
            Message::user("Run echo 0..99 one per step, then finish."),
            true,
        )
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(600), handle.wait_until_stopped())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(
        handle.status(),
        ExecutionStatus::Finished,
        "the run did not finish"
    );
    let events = handle.events();
    let observations = events
        .iter()
        .filter(|e| matches!(e, Event::Observation(_)))
        .count();
    assert_eq!(observations, STEPS + 1);
    let (tool, between) = gaps(&events);
    handle.close().await.unwrap();
    (
        elapsed.as_secs_f64() * 1000.0 / (STEPS + 1) as f64,
        tool,
        between,
    )
}

/// Median action→observation and observation→next-action gaps, from event timestamps.
fn gaps(events: &[Event]) -> (f64, f64) {
    let ts = |e: &Event| {
        chrono::NaiveDateTime::parse_from_str(e.timestamp(), "%Y-%m-%dT%H:%M:%S%.f").unwrap()
    };
    let mut tool = Vec::new();
    let mut between = Vec::new();
    let mut last_action: Option<chrono::NaiveDateTime> = None;
    let mut last_obs: Option<chrono::NaiveDateTime> = None;
    for e in events {
        match e {
            Event::Action(_) => {
                if let Some(o) = last_obs.take() {
                    between.push((ts(e) - o).num_microseconds().unwrap() as f64 / 1000.0);
                }
                last_action = Some(ts(e));
            }
            Event::Observation(_) => {
                if let Some(a) = last_action.take() {
                    tool.push((ts(e) - a).num_microseconds().unwrap() as f64 / 1000.0);
                }
                last_obs = Some(ts(e));
            }
            _ => {}
        }
    }
    (median(tool), median(between))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
