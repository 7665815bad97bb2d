//! The `glob` and `grep` tools through the server: a spec naming them by name or upstream's
//! class name gets them, and their results reach the model's next request.

use serde_json::json;
use tandem_testkit::Step;

use crate::harness::{self, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_spec_naming_glob_and_grep_gets_them_and_the_model_reads_their_results() {
    let llm = harness::llm(vec![
        Step::tool_call("glob", json!({"pattern": "**/*.rs"})),
        Step::tool_call(
            "grep",
            json!({"pattern": "fn\\s+main", "include": "*.{rs,toml}"}),
        ),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let t = TestServer::start().await;
    let w = std::fs::canonicalize(&t.workspace).unwrap();
    std::fs::create_dir_all(w.join("src")).unwrap();
    std::fs::create_dir_all(w.join("target")).unwrap();
    std::fs::write(w.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(w.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(w.join("src/lib.rs"), "pub fn lib() {}\n").unwrap();
    std::fs::write(w.join("target/built.rs"), "fn main() {}\n").unwrap();

    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "glob"}, {"name": "GrepTool", "params": {}}]);
    agent["include_default_tools"] = json!(["FinishTool"]);
    let id = t.create(&llm, json!({"agent": agent})).await;
    t.message(&id, "find the entry point", true).await;
    assert_eq!(t.wait_status(&id, &["finished", "error"]).await, "finished");

    // The agent's requests, without the title's (which offers no tools).
    let requests: Vec<serde_json::Value> = llm
        .requests()
        .into_iter()
        .filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    let tools = requests[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(names, ["glob", "grep", "finish"]);
    let glob_description = tools[0]["function"]["description"].as_str().unwrap();
    assert!(
        glob_description.contains(&format!(
            "Your current working directory is: {}",
            t.workspace.display()
        )),
        "{glob_description}"
    );

    let main = w.join("src/main.rs").display().to_string();
    let lib = w.join("src/lib.rs").display().to_string();
    let after_glob = requests[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(after_glob["role"], "tool");
    let text = after_glob["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Found 2 file(s) matching pattern '**/*.rs'"),
        "{text}"
    );
    assert!(text.contains(&main) && text.contains(&lib), "{text}");
    assert!(
        !text.contains("built.rs"),
        "gitignored files are skipped: {text}"
    );

    let after_grep = requests[2]["messages"].as_array().unwrap().last().unwrap();
    let text = after_grep["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Found 1 file(s) containing pattern 'fn\\s+main'"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(" (filtered by '*.{{rs,toml}}'):\n{main}")),
        "{text}"
    );

    let events = t.events(&id).await;
    let observation = |kind: &str| {
        events
            .iter()
            .find(|e| e["kind"] == "ObservationEvent" && e["observation"]["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {events:?}"))["observation"]
            .clone()
    };
    let glob = observation("GlobObservation");
    assert_eq!(glob["pattern"], "**/*.rs");
    assert_eq!(glob["files"].as_array().unwrap().len(), 2);
    assert_eq!(glob["truncated"], false);
    let grep = observation("GrepObservation");
    assert_eq!(grep["matches"], json!([main]));
    assert_eq!(grep["include_pattern"], "*.{rs,toml}");
    let action = events
        .iter()
        .find(|e| e["kind"] == "ActionEvent" && e["tool_name"] == "grep")
        .unwrap();
    assert_eq!(action["action"]["kind"], "GrepAction");
}
