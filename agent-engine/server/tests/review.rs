//! Per-hunk review through REST: one rejected hunk is reverted on disk while the file keeps
//! the agent's other changes, the agent reads which hunk and why at its next step, a whole
//! added file rejected goes away, and bad input gets a clear answer.

use crate::harness;

use harness::TestServer;
use serde_json::{Value, json};
use tandem_testkit::Step;

fn hunks(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if line.starts_with("@@") {
            out.push(String::new());
        }
        if let Some(h) = out.last_mut() {
            h.push_str(line);
        }
    }
    out
}

fn file_diff<'a>(diff: &'a Value, path: &str) -> &'a str {
    diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {diff}"))["diff"]
        .as_str()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rejected_hunk_is_reverted_alone_and_the_agent_reads_why() {
    let t = TestServer::start().await;
    let ws = t.workspace.clone();
    let original: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.join("notes.txt"), &original).unwrap();
    let llm = harness::llm(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "sed -i -e 's/^line 2$/line two/' -e 's/^line 25$/line twenty-five/' notes.txt && printf 'fresh\\n' > added.txt"}),
        ),
        Step::tool_call("finish", json!({"message": "edited"})),
        Step::tool_call("finish", json!({"message": "understood"})),
    ]);
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "edit the notes", true).await;
    t.wait_status(&id, &["finished"]).await;

    let (s, diff) = t
        .get(&format!("/api/conversations/{id}/workspace/diff"))
        .await;
    assert_eq!(s, 200, "{diff}");
    let notes = hunks(file_diff(&diff, "notes.txt"));
    assert_eq!(notes.len(), 2, "{diff}");
    let reject = format!("/api/conversations/{id}/workspace/reject-hunk");

    let (s, done) = t
        .post(
            &reject,
            json!({"path": "notes.txt", "hunk": notes[1], "reason": "25 stays a number"}),
        )
        .await;
    assert_eq!(s, 200, "{done}");
    assert_eq!(done["exists"], true);
    assert_eq!(done["agent_told"], true);
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        original.replace("line 2\n", "line two\n"),
        "only the rejected hunk is reverted"
    );

    // The same hunk again: it is no longer in the diff.
    let (s, stale) = t
        .post(&reject, json!({"path": "notes.txt", "hunk": notes[1]}))
        .await;
    assert_eq!(s, 409, "{stale}");

    // All of an added file rejected: the file goes.
    let added = hunks(file_diff(&diff, "added.txt"));
    let (s, gone) = t
        .post(&reject, json!({"path": "added.txt", "hunk": added[0]}))
        .await;
    assert_eq!(s, 200, "{gone}");
    assert_eq!(gone["exists"], false);
    assert!(!ws.join("added.txt").exists());

    // The agent's next step reads which hunk was rejected, and why.
    t.message(&id, "go on", true).await;
    t.wait_status(&id, &["finished"]).await;
    let last = llm.requests().pop().unwrap().to_string();
    assert!(last.contains("rejected this hunk of `notes.txt`"), "{last}");
    assert!(last.contains("+line twenty-five"), "{last}");
    assert!(last.contains("Reason: 25 stays a number"), "{last}");
    assert!(last.contains("rejected this hunk of `added.txt`"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_review_requests_name_what_is_wrong() {
    let t = TestServer::start().await;
    let ws = t.workspace.clone();
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    let llm = harness::llm(vec![]);
    let id = t.create(&llm, json!({})).await;
    std::fs::write(ws.join("a.txt"), "b\n").unwrap();
    let reject = format!("/api/conversations/{id}/workspace/reject-hunk");
    let hunk = "@@ -1 +1 @@\n-a\n+b\n";

    let (s, e) = t
        .post(&reject, json!({"path": "a.txt", "hunk": "-a\n+b\n"}))
        .await;
    assert_eq!(s, 422, "{e}");
    assert!(e.to_string().contains("hunk"), "{e}");
    let (s, e) = t
        .post(
            &reject,
            json!({"path": "a.txt", "hunk": hunk, "reason": "x".repeat(5000)}),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert!(e.to_string().contains("reason"), "{e}");
    let (s, e) = t
        .post(&reject, json!({"path": "../a.txt", "hunk": hunk}))
        .await;
    assert_eq!(s, 403, "{e}");
    let (s, e) = t.post(&reject, json!({"path": "", "hunk": hunk})).await;
    assert_eq!(s, 422, "{e}");
    let (s, e) = t.post(&reject, json!({"hunk": hunk})).await;
    assert_eq!(s, 422, "{e}");
    std::fs::write(ws.join("bin"), [0u8, 159, 146, 150]).unwrap();
    let (s, e) = t
        .post(
            &reject,
            json!({"path": "bin", "hunk": "@@ -0,0 +1 @@\n+x\n"}),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert!(e.to_string().contains("not a text file"), "{e}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "b\n",
        "nothing written on a refusal"
    );

    // The well-formed request still works after all that.
    let (s, ok) = t
        .post(&reject, json!({"path": "a.txt", "hunk": hunk}))
        .await;
    assert_eq!(s, 200, "{ok}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rejection_the_baseline_cannot_vouch_for_deletes_nothing() {
    use std::os::unix::fs::PermissionsExt;

    let t = TestServer::start().await;
    let ws = t.workspace.clone();
    std::fs::write(ws.join("run.sh"), "echo a\n").unwrap();
    std::fs::set_permissions(ws.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let llm = harness::llm(vec![]);
    let id = t.create(&llm, json!({})).await;
    let reject = format!("/api/conversations/{id}/workspace/reject-hunk");

    // A rejected hunk keeps the file's mode (the exec bit stays).
    std::fs::write(ws.join("run.sh"), "echo b\n").unwrap();
    let (s, ok) = t
        .post(
            &reject,
            json!({"path": "run.sh", "hunk": "@@ -1 +1 @@\n-echo a\n+echo b\n"}),
        )
        .await;
    assert_eq!(s, 200, "{ok}");
    let meta = std::fs::metadata(ws.join("run.sh")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o755);
    assert_eq!(
        std::fs::read_to_string(ws.join("run.sh")).unwrap(),
        "echo a\n"
    );

    // A folder the Changes view leaves out: refused, the file stays.
    std::fs::create_dir_all(ws.join("node_modules/pkg")).unwrap();
    std::fs::write(ws.join("node_modules/pkg/index.js"), "x\n").unwrap();
    let (s, e) = t
        .post(
            &reject,
            json!({"path": "node_modules/pkg/index.js", "hunk": "@@ -0,0 +1 @@\n+x\n"}),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert!(e.to_string().contains("node_modules"), "{e}");
    assert!(ws.join("node_modules/pkg/index.js").exists());

    // Without a baseline (missing, then corrupt), a file it would not list is not taken for
    // one the agent added.
    std::fs::write(ws.join("mine.txt"), "the person's own\n").unwrap();
    let conv = t
        .home
        .path()
        .join("conversations")
        .join(id.replace('-', ""));
    let baseline = conv.join("tandem_workspace_baseline.json");
    std::fs::remove_file(&baseline).unwrap();
    for corrupt in [None, Some("{\"taken")] {
        if let Some(text) = corrupt {
            std::fs::write(&baseline, text).unwrap();
        }
        let (s, e) = t
            .post(
                &reject,
                json!({"path": "mine.txt", "hunk": "@@ -0,0 +1 @@\n+the person's own\n"}),
            )
            .await;
        assert_eq!(s, 409, "{e}");
        assert!(e.to_string().contains("baseline"), "{e}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("mine.txt")).unwrap(),
        "the person's own\n"
    );
    let (s, _) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(s, 200, "the conversation keeps serving");
}
