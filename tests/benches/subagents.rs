//! Sub-agent fan-out: a parent whose one LLM response asks for 5 tasks (they run at once)
//! against a parent that asks for the same 5 tasks one response at a time (they run one after
//! another). Each child takes a few steps (`STEPS` think calls, then its answer) on the
//! zero-latency scripted LLM; children are conversations in the parent's store, as in `tandem
//! run --sub-agents`. Prints the median and mean wall time (ms) of each and the ratio.
//!
//! Run: `cargo bench -p tandem-e2e --bench subagents` (`BENCH_N=20` rounds per side; 10).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_llm::{Llm, OpenAiChat};
use tandem_protocol::{AgentSpec, LlmConfig, Message, ToolSpec};
use tandem_sdk::subagent::{LocalSubAgents, SubAgents, ToolMaker};
use tandem_sdk::{Conversation, ConversationOptions, ConversationStore, Runtime, ToolEnv};
use tandem_testkit::{ScriptedLlmServer, Step, ToolCallSpec};

const TASKS: usize = 5;
const STEPS: usize = 3;

fn tool_messages(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count())
}

fn is_parent(request: &Value) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"))
}

fn task(n: usize) -> ToolCallSpec {
    ToolCallSpec::new(
        "task",
        json!({"description": format!("part {n}"), "prompt": format!("do part {n}")}),
    )
}

/// Parents in `parallel` mode ask for every task in their first response; else one task per
/// response. Children think `STEPS` times, then answer.
fn llm(parallel: bool) -> ScriptedLlmServer {
    ScriptedLlmServer::with_responder(Arc::new(move |request: &Value, index| {
        let done = tool_messages(request);
        if is_parent(request) {
            if parallel && done == 0 {
                Step::tool_calls((0..TASKS).map(task).collect())
            } else if !parallel && done < TASKS {
                Step::tool_calls(vec![task(done)])
            } else {
                Step::text("all parts done")
            }
        } else if done < STEPS {
            Step::tool_call("think", json!({"thought": format!("step {index}")}))
        } else {
            Step::text("part done")
        }
    }))
}

async fn round(server: &ScriptedLlmServer) -> f64 {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let store = ConversationStore::new(home.path().join("conversations"));
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(server.base_url());
    config.api_key = Some("sk-bench".into());
    config.num_retries = 0;
    let llm: Arc<dyn Llm> = Arc::new(OpenAiChat::new(config).unwrap());
    let make: ToolMaker = Arc::new(|spec, env| {
        Box::pin(async move {
            tandem_tools::resolve_tools(&spec, &tandem_host::catalog(), env)
                .await
                .map_err(|e| tandem_sdk::MakeToolError::Config(e.to_string()))
        })
    });
    let agents: Arc<dyn SubAgents> =
        Arc::new(LocalSubAgents::new(store.clone(), Arc::clone(&llm), make));
    let mut spec = AgentSpec::default_for(LlmConfig::new("openai/scripted"));
    spec.tools = vec![ToolSpec {
        name: "task_tool_set".into(),
        params: Default::default(),
    }];
    spec.condenser = None;
    let id = uuid::Uuid::new_v4().to_string();
    let mut env = ToolEnv::new(workspace.path()).with(agents);
    env.conversation_id = id.clone();
    let tools = tandem_tools::resolve_tools(&spec, &tandem_host::catalog(), env)
        .await
        .unwrap();
    let mut options = ConversationOptions::new(spec, workspace.path().to_path_buf());
    options.id = Some(id);
    options.autotitle = false;
    let parent = Conversation::create(
        &store,
        options,
        Runtime {
            llm,
            tools,
            checkpoints: None,
            run_gate: None,
        },
    )
    .await
    .unwrap();
    let started = Instant::now();
    parent
        .send_message(Message::user("do the five parts"), true)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(120), parent.wait_until_stopped())
        .await
        .expect("the parent's run ended");
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(parent.status().as_str(), "finished");
    let answers = parent
        .events()
        .iter()
        .filter(|e| serde_json::to_value(e).unwrap()["observation"]["status"] == "completed")
        .count();
    assert_eq!(answers, TASKS, "every task completed");
    parent.close().await.unwrap();
    ms
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v.iter().sum::<f64>() / v.len() as f64)
}

fn main() {
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "sub-agent fan-out benchmark: {TASKS} tasks of {} LLM steps each ({STEPS} think calls and an answer), zero-latency scripted LLM, {n} rounds per side",
        STEPS + 1
    );
    let parallel_llm = llm(true);
    let sequential_llm = llm(false);
    // One round each to warm up the runtime and the connections.
    rt.block_on(round(&parallel_llm));
    rt.block_on(round(&sequential_llm));
    let mut parallel = Vec::new();
    let mut sequential = Vec::new();
    for _ in 0..n {
        parallel.push(rt.block_on(round(&parallel_llm)));
        sequential.push(rt.block_on(round(&sequential_llm)));
    }
    let (pm, pa) = stats(parallel);
    let (sm, sa) = stats(sequential);
    println!("fan-out, one response with {TASKS} task calls: median {pm:.1} ms, mean {pa:.1} ms");
    println!(
        "sequential, {TASKS} responses with one task call: median {sm:.1} ms, mean {sa:.1} ms"
    );
    println!("sequential / fan-out (median): {:.2}x", sm / pm);
}
