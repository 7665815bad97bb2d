//! Checkpoints around the agent's actions (whatever tool made the change) and rewind through
//! REST: the preview, the restore, a person's edit skipped and named, the undo, bad input.

use crate::harness;

use harness::TestServer;
use serde_json::{Value, json};
use tandem_testkit::Step;

fn paths(v: &Value) -> Vec<String> {
    let mut p: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    p.sort();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_action_is_checkpointed_and_a_rewind_is_previewed_applied_and_undone() {
    let t = TestServer::start().await;
    let ws = t.workspace.clone();
    let llm = harness::llm(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "printf one > a.txt && printf keep > b.txt"}),
        ),
        Step::tool_call(
            "file_editor",
            json!({"command": "create", "path": ws.join("c.txt").to_string_lossy(), "file_text": "agent's c\n"}),
        ),
        Step::tool_call(
            "terminal",
            json!({"command": "rm b.txt && printf two > a.txt"}),
        ),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    std::fs::write(ws.join("mine.txt"), "the person's, from before").unwrap();
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "go", true).await;
    t.wait_status(&id, &["finished"]).await;

    let (s, list) = t.get(&format!("/api/conversations/{id}/checkpoints")).await;
    assert_eq!(s, 200, "{list}");
    let changed: Vec<&Value> = list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["author"] == "agent")
        .collect();
    assert_eq!(changed.len(), 3, "{list}");
    assert_eq!(changed[0]["tool_name"], "terminal");
    assert_eq!(paths(&changed[0]["added"]), ["a.txt", "b.txt"]);
    assert_eq!(changed[1]["tool_name"], "file_editor");
    assert_eq!(paths(&changed[1]["added"]), ["c.txt"]);
    assert_eq!(paths(&changed[2]["modified"]), ["a.txt"]);
    assert_eq!(paths(&changed[2]["deleted"]), ["b.txt"]);
    // Each agent checkpoint belongs to its action's observation.
    let events = t.events(&id).await;
    let first_observation = changed[0]["event_id"].as_str().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["id"] == first_observation && e["kind"] == "ObservationEvent")
    );

    // The person edits c.txt after the agent.
    std::fs::write(ws.join("c.txt"), "the person's c\n").unwrap();

    let rewind = format!("/api/conversations/{id}/rewind");
    let (s, preview) = t
        .post(
            &rewind,
            json!({"event_id": first_observation, "dry_run": true}),
        )
        .await;
    assert_eq!(s, 200, "{preview}");
    assert_eq!(preview["dry_run"], true);
    assert!(preview["undo_checkpoint_id"].is_null());
    assert!(
        preview["diff"].as_str().unwrap().contains("-two"),
        "{preview}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "two",
        "a dry run writes nothing"
    );

    let (s, done) = t
        .post(&rewind, json!({"event_id": first_observation}))
        .await;
    assert_eq!(s, 200, "{done}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one");
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "keep");
    assert_eq!(
        std::fs::read_to_string(ws.join("c.txt")).unwrap(),
        "the person's c\n",
        "a person's edit survives the default"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("mine.txt")).unwrap(),
        "the person's, from before"
    );
    let skipped: Vec<&str> = done["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["c.txt"], "{done}");
    assert!(
        done["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("person")
    );

    // Undo: exactly the workspace before the rewind.
    let undo = done["undo_checkpoint_id"].as_str().unwrap();
    let (s, undone) = t.post(&rewind, json!({"checkpoint_id": undo})).await;
    assert_eq!(s, 200, "{undone}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "two");
    assert!(!ws.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("c.txt")).unwrap(),
        "the person's c\n"
    );

    // files: all takes the person's edit back too.
    let (s, all) = t
        .post(
            &rewind,
            json!({"event_id": first_observation, "files": "all"}),
        )
        .await;
    assert_eq!(s, 200, "{all}");
    assert!(!ws.join("c.txt").exists());

    // Bad input: named, and the conversation keeps serving.
    for (body, field) in [
        (json!({"event_id": "no-such-event"}), "event_id"),
        (json!({"checkpoint_id": "0000000"}), "checkpoint_id"),
        (json!({}), "event_id"),
        (
            json!({"event_id": first_observation, "restore": "sideways"}),
            "restore",
        ),
    ] {
        let (s, e) = t.post(&rewind, body.clone()).await;
        assert_eq!(s, 422, "{body} → {e}");
        assert!(e.to_string().contains(field), "{body} → {e}");
    }
    let (s, _) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(s, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn checkpoints_off_says_so() {
    let t = TestServer::start_with(|c| c.checkpoints_home = None).await;
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "printf x > x.txt"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "go", true).await;
    t.wait_status(&id, &["finished"]).await;
    let (s, list) = t.get(&format!("/api/conversations/{id}/checkpoints")).await;
    assert_eq!(
        (s, list["checkpoints"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    let events = t.events(&id).await;
    let any = events[0]["id"].as_str().unwrap();
    let (s, e) = t
        .post(
            &format!("/api/conversations/{id}/rewind"),
            json!({"event_id": any}),
        )
        .await;
    assert_eq!(s, 409, "{e}");
    assert!(e.to_string().contains("checkpoints are off"), "{e}");
}

/// The last agent step's request (title requests carry no tools).
fn last_agent_request(llm: &tandem_testkit::ScriptedLlmServer) -> String {
    llm.requests()
        .into_iter()
        .rev()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn navigate_and_a_chat_rewind_continue_from_an_earlier_event_and_fork_copies_a_branch_that_runs()
 {
    let t = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "printf 1 > one.txt"})),
        Step::tool_call("finish", json!({"message": "first done"})),
        Step::tool_call("terminal", json!({"command": "printf 2 > two.txt"})),
        Step::tool_call("finish", json!({"message": "second done"})),
        Step::tool_call("finish", json!({"message": "after navigate"})),
        Step::tool_call("finish", json!({"message": "the fork ran"})),
        Step::tool_call("finish", json!({"message": "after a chat rewind"})),
    ]);
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "FIRST-TASK", true).await;
    t.wait_status(&id, &["finished"]).await;
    t.message(&id, "SECOND-TASK", true).await;
    t.wait_status(&id, &["finished"]).await;
    let events = t.events(&id).await;
    let first_finish = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "finish")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Navigate: the head moves; the next run sees the first task only.
    let (s, info) = t
        .post(
            &format!("/api/conversations/{id}/navigate"),
            json!({"event_id": first_finish}),
        )
        .await;
    assert_eq!(s, 200, "{info}");
    assert_eq!(info["leaf_event_id"], first_finish.as_str());
    t.message(&id, "THIRD-TASK", true).await;
    t.wait_status(&id, &["finished"]).await;
    let request = last_agent_request(&llm);
    assert!(
        request.contains("FIRST-TASK") && request.contains("THIRD-TASK"),
        "{request}"
    );
    assert!(
        !request.contains("SECOND-TASK"),
        "the other branch is not in the view: {request}"
    );
    // Every branch stays in the log.
    let all = t.events(&id).await;
    assert!(all.len() > events.len());

    // Fork from the first finish: a new conversation, idle, with the branch up to there,
    // running on the source's LLM (its key was given in the request, in memory only).
    let (s, fork) = t
        .post(
            &format!("/api/conversations/{id}/fork"),
            json!({"from_event_id": first_finish, "title": "a fork", "tags": {"topic": "x1"}}),
        )
        .await;
    assert_eq!(s, 201, "{fork}");
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    assert_ne!(fork_id, id);
    assert_eq!(fork["execution_status"], "idle");
    assert_eq!(fork["title"], "a fork");
    assert_eq!(fork["forked_from_event_id"], first_finish.as_str());
    assert_eq!(fork["leaf_event_id"], first_finish.as_str());
    let copied = t.events(&fork_id).await;
    assert!(copied.iter().any(|e| e["id"] == first_finish.as_str()));
    assert!(!copied.iter().any(|e| e.to_string().contains("SECOND-TASK")));
    t.message(&fork_id, "FORK-TASK", true).await;
    t.wait_status(&fork_id, &["finished"]).await;
    let request = last_agent_request(&llm);
    assert!(
        request.contains("FORK-TASK") && !request.contains("THIRD-TASK"),
        "{request}"
    );

    // A chat rewind is navigate through the rewind route; both restores the files too.
    let first_obs = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::write(t.workspace.join("two.txt"), "2").unwrap();
    let (s, both) = t
        .post(
            &format!("/api/conversations/{id}/rewind"),
            json!({"event_id": first_obs, "restore": "both", "files": "all"}),
        )
        .await;
    assert_eq!(s, 200, "{both}");
    assert_eq!(both["leaf_event_id"], first_obs.as_str());
    assert!(!t.workspace.join("two.txt").exists());
    let (_, info) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(info["leaf_event_id"], first_obs.as_str());

    // Bad input, named.
    for (path, body) in [
        ("navigate", json!({"event_id": "nope"})),
        ("fork", json!({"from_event_id": "nope"})),
    ] {
        let (s, e) = t
            .post(&format!("/api/conversations/{id}/{path}"), body.clone())
            .await;
        assert_eq!(s, 404, "upstream's status: {path} {body} → {e}");
        assert!(e.to_string().contains("nope"), "{path} {body} → {e}");
    }
    for (path, body, field) in [
        ("fork", json!({"tags": {"Bad Key": "v"}}), "tags"),
        ("fork", json!({"id": "not-a-uuid"}), "id"),
        ("fork", json!({"workspace": "restore"}), "workspace"),
        (
            "fork",
            json!({"workspace": "worktree"}),
            "not in a git repository",
        ),
    ] {
        let (s, e) = t
            .post(&format!("/api/conversations/{id}/{path}"), body.clone())
            .await;
        assert_eq!(s, 422, "{path} {body} → {e}");
        assert!(e.to_string().contains(field), "{path} {body} → {e}");
    }
    let (s, e) = t
        .post(
            &format!("/api/conversations/{id}/fork"),
            json!({"id": fork_id}),
        )
        .await;
    assert_eq!(s, 409, "an existing id: {e}");
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fork_in_its_own_worktree_runs_beside_the_source() {
    let t = TestServer::start().await;
    let ws = t.workspace.clone();
    std::fs::write(ws.join("a.txt"), "zero").unwrap();
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(
        &ws,
        &[
            "-c",
            "user.name=U",
            "-c",
            "user.email=u@example.invalid",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    );
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "printf one > a.txt"})),
        Step::tool_call("terminal", json!({"command": "printf two > a.txt"})),
        Step::tool_call("finish", json!({"message": "done"})),
        Step::tool_call("terminal", json!({"command": "printf fork > f.txt"})),
        Step::tool_call("finish", json!({"message": "the fork ran"})),
    ]);
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "go", true).await;
    t.wait_status(&id, &["finished"]).await;
    let (_, list) = t.get(&format!("/api/conversations/{id}/checkpoints")).await;
    let first_obs = list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["author"] == "agent")
        .unwrap()["event_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let (s, fork) = t
        .post(
            &format!("/api/conversations/{id}/fork"),
            json!({"from_event_id": first_obs, "workspace": "worktree"}),
        )
        .await;
    assert_eq!(s, 201, "{fork}");
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    let tree = std::path::PathBuf::from(fork["workspace"]["working_dir"].as_str().unwrap());
    assert_eq!(tree, t.home.path().join("worktrees").join(&fork_id));
    assert_eq!(std::fs::read_to_string(tree.join("a.txt")).unwrap(), "one");
    assert_eq!(
        git(&tree, &["branch", "--show-current"]),
        format!("tandem/{fork_id}")
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "two",
        "the source is untouched"
    );
    assert_eq!(git(&ws, &["branch", "--show-current"]), "main");

    // The fork runs in its worktree; the source's files stay as they were.
    t.message(&fork_id, "go on", true).await;
    t.wait_status(&fork_id, &["finished"]).await;
    assert_eq!(std::fs::read_to_string(tree.join("f.txt")).unwrap(), "fork");
    assert!(!ws.join("f.txt").exists());
    let (_, fork_list) = t
        .get(&format!("/api/conversations/{fork_id}/checkpoints"))
        .await;
    assert_eq!(fork_list["workspace"], tree.to_string_lossy().as_ref());

    // A fork that cannot be created (its id exists) leaves no worktree or branch behind.
    let (s, e) = t
        .post(
            &format!("/api/conversations/{id}/fork"),
            json!({"id": fork_id, "workspace": "worktree"}),
        )
        .await;
    assert!(s == 409 || s == 422, "{s} {e}");
    let branches = git(&ws, &["branch", "--list"]);
    assert_eq!(branches.lines().count(), 2, "{branches}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn changes_outside_the_workspace_are_named_on_the_action_and_in_a_rewind() {
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join(".bashrc"), "# mine\n").unwrap();
    std::fs::create_dir_all(out.join(".local/lib")).unwrap();
    let watched = out.clone();
    let t = TestServer::start_with(move |c| c.checkpoints_outside = vec![watched]).await;
    let o = out.to_string_lossy().into_owned();
    let llm = harness::llm(vec![
        Step::tool_call(
            "terminal",
            json!({"command": format!("mkdir -p {o}/.local/lib/tool/bin && echo 'alias x=y' >> {o}/.bashrc && printf in > inside.txt")}),
        ),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "install it", true).await;
    t.wait_status(&id, &["finished"]).await;

    let (_, list) = t.get(&format!("/api/conversations/{id}/checkpoints")).await;
    let agent = list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["author"] == "agent")
        .unwrap()
        .clone();
    assert_eq!(paths(&agent["added"]), ["inside.txt"]);
    let outside_changes: Vec<(String, String, bool)> = agent["outside"]
        .as_array()
        .unwrap_or_else(|| panic!("no outside changes: {agent}"))
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().replace(&o, "OUT"),
                c["change"].as_str().unwrap().to_owned(),
                c["restorable"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outside_changes,
        [
            ("OUT/.bashrc".to_owned(), "modified".to_owned(), false),
            ("OUT/.local/lib/tool".to_owned(), "added".to_owned(), false),
        ]
    );

    // A rewind takes back the workspace and names what it cannot.
    let first_action = t
        .events(&id)
        .await
        .into_iter()
        .find(|e| e["kind"] == "ActionEvent")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, done) = t
        .post(
            &format!("/api/conversations/{id}/rewind"),
            json!({"event_id": first_action}),
        )
        .await;
    assert_eq!(s, 200, "{done}");
    assert!(!t.workspace.join("inside.txt").exists());
    let named: Vec<String> = done["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"].as_str().unwrap().contains("not restorable"))
        .map(|s| s["path"].as_str().unwrap().replace(&o, "OUT"))
        .collect();
    assert_eq!(named, ["OUT/.bashrc", "OUT/.local/lib/tool"], "{done}");
    assert!(out.join(".local/lib/tool/bin").is_dir(), "left as it is");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_disk_under_the_checkpoints_leaves_the_agent_running() {
    let store_home = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(store_home.path())
        .status()
        .unwrap();
    assert!(mounted.success(), "mounting a tmpfs (the test needs root)");
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }
    let _unmount = Unmount(store_home.path().to_path_buf());
    let home = store_home.path().to_path_buf();
    let t = TestServer::start_with(move |c| c.checkpoints_home = Some(home)).await;
    let llm = harness::llm(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "head -c 2000000 /dev/urandom > big.bin"}),
        ),
        Step::tool_call("terminal", json!({"command": "printf after > after.txt"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "go", true).await;
    assert_eq!(t.wait_status(&id, &["finished", "error"]).await, "finished");
    assert_eq!(
        std::fs::metadata(t.workspace.join("big.bin"))
            .unwrap()
            .len(),
        2_000_000
    );
    assert_eq!(
        std::fs::read_to_string(t.workspace.join("after.txt")).unwrap(),
        "after"
    );
    let (s, list) = t.get(&format!("/api/conversations/{id}/checkpoints")).await;
    assert_eq!(s, 200, "{list}");
}
