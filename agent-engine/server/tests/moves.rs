//! Moving a conversation between two servers through REST: export, import with the same id,
//! the source fenced; the conversation continues on the target with its events and its
//! workspace (untracked files too), and moves back. Bad input: a damaged, truncated or newer
//! capsule, an id the target has, an LLM the target cannot run, a conversation not at a step
//! boundary — each named, and the source left as it was.

use crate::harness;

use harness::{KEY, TestServer};
use serde_json::{Value, json};
use tandem_testkit::Step;

const CANARY: &str = "sk-move-canary-7731";

async fn export(t: &TestServer, id: &str, body: Value) -> (u16, Vec<u8>) {
    let resp = t
        .http
        .post(t.url(&format!("/api/conversations/{id}/export")))
        .header("X-Session-API-Key", KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.bytes().await.unwrap().to_vec())
}

async fn import(t: &TestServer, capsule: Vec<u8>, options: Value) -> (u16, Value) {
    let form = reqwest::multipart::Form::new()
        .part(
            "capsule",
            reqwest::multipart::Part::bytes(capsule).file_name("c.tandem-capsule"),
        )
        .text("options", options.to_string());
    let resp = t
        .http
        .post(t.url("/api/conversations/import"))
        .header("X-Session-API-Key", KEY)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn ids(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn all_events(t: &TestServer, id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut page_id: Option<String> = None;
    loop {
        let path = match &page_id {
            Some(p) => format!("/api/conversations/{id}/events/search?limit=100&page_id={p}"),
            None => format!("/api/conversations/{id}/events/search?limit=100"),
        };
        let (_, page) = t.get(&path).await;
        out.extend(page["items"].as_array().cloned().unwrap_or_default());
        match page["next_page_id"].as_str() {
            Some(p) => page_id = Some(p.to_owned()),
            None => return out,
        }
    }
}

/// local → another server → back, continuing the task after each hop.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_conversation_moves_to_another_server_continues_there_and_comes_back() {
    let a = TestServer::start().await;
    let b = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "printf one > a.txt && mkdir -p d && printf two > d/b.txt && ln -s a.txt link && echo $MOVE_CANARY && cd d && export MOVED_VAR='one two' SECRET_COPY=$MOVE_CANARY && unset PAGER"}),
        ),
        Step::tool_call("finish", json!({"message": "first part done"})),
        Step::tool_call(
            "terminal",
            // In the folder the shell was in before the move, with its environment.
            json!({"command": "cat ../a.txt b.txt > ../joined.txt && echo \"var=$MOVED_VAR pager=${PAGER-none}\" > ../env.txt && pwd"}),
        ),
        Step::tool_call("finish", json!({"message": "second part done"})),
        Step::tool_call(
            "terminal",
            json!({"command": "cat ../joined.txt > ../back.txt && echo $MOVED_VAR >> ../back.txt"}),
        ),
        Step::tool_call("finish", json!({"message": "third part done"})),
    ]);
    let id = a
        .create(&llm, json!({"secrets": {"MOVE_CANARY": CANARY}}))
        .await;
    let (status, _) = a
        .req(
            reqwest::Method::PATCH,
            &format!("/api/conversations/{id}"),
            Some(json!({"title": "Move me around"})),
        )
        .await;
    assert_eq!(status, 200);
    a.message(&id, "first part", true).await;
    a.wait_status(&id, &["finished"]).await;
    let before = all_events(&a, &id).await;

    // Export → import → fence.
    let (status, capsule) = export(&a, &id, json!({"source_url": a.url("")})).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&capsule));
    assert!(
        !String::from_utf8_lossy(&capsule).contains(CANARY),
        "the secret is nowhere in the capsule"
    );
    assert!(
        !String::from_utf8_lossy(&capsule).contains("sk-secret-x"),
        "nor the LLM's key"
    );
    let (status, imported) = import(&b, capsule.clone(), json!({})).await;
    assert_eq!(status, 201, "{imported}");
    assert_eq!(imported["conversation"]["id"], id);
    assert_eq!(imported["events"], before.len());
    let moved_dir = std::path::PathBuf::from(imported["working_dir"].as_str().unwrap());
    assert!(
        moved_dir.starts_with(b.home.path()),
        "a new folder under the target's workspace root: {}",
        moved_dir.display()
    );
    assert!(
        moved_dir.ends_with("move-me-around-".to_owned() + &id.replace('-', "")[..8]),
        "named after the conversation: {}",
        moved_dir.display()
    );
    assert_eq!(
        std::fs::read_to_string(moved_dir.join("a.txt")).unwrap(),
        "one"
    );
    assert_eq!(
        std::fs::read_to_string(moved_dir.join("d/b.txt")).unwrap(),
        "two"
    );
    assert_eq!(
        std::fs::read_link(moved_dir.join("link")).unwrap(),
        std::path::Path::new("a.txt")
    );
    assert_eq!(
        ids(&all_events(&b, &id).await),
        ids(&before),
        "0 lost, 0 duplicated"
    );
    let (status, fenced) = a
        .post(
            &format!("/api/conversations/{id}/moved"),
            json!({"url": b.url(""), "conversation_id": id}),
        )
        .await;
    assert_eq!(status, 200, "{fenced}");

    // The source is a read-only record: reads answer, writes name where it went.
    let (status, _) = a.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200);
    let (status, refused) = a
        .post(
            &format!("/api/conversations/{id}/events"),
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "run": true}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["code"], "moved");
    assert_eq!(refused["moved_to"]["url"], b.url(""));
    assert_eq!(refused["moved_to"]["conversation_id"], id);
    let (status, _) = a
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(status, 409);

    // It continues on the target, in its new folder, with the files it made before.
    b.message(&id, "second part", true).await;
    b.wait_status(&id, &["finished"]).await;
    assert_eq!(
        std::fs::read_to_string(moved_dir.join("joined.txt")).unwrap(),
        "onetwo"
    );
    assert_eq!(
        std::fs::read_to_string(moved_dir.join("env.txt")).unwrap(),
        "var=one two pager=none\n",
        "the shell's environment changes moved with it"
    );
    let after_b = all_events(&b, &id).await;
    assert_eq!(ids(&after_b[..before.len()]), ids(&before));

    // And back: the record on the source is replaced by the conversation, which goes on.
    let (status, capsule) = export(&b, &id, json!({})).await;
    assert_eq!(status, 200);
    let back_dir = a.home.path().join("back-here");
    let (status, imported) = import(
        &a,
        capsule,
        json!({"working_dir": back_dir.to_string_lossy()}),
    )
    .await;
    assert_eq!(status, 201, "{imported}");
    assert_eq!(imported["events"], after_b.len());
    let (status, _) = b
        .post(
            &format!("/api/conversations/{id}/moved"),
            json!({"url": a.url(""), "conversation_id": id}),
        )
        .await;
    assert_eq!(status, 200);
    a.message(&id, "third part", true).await;
    a.wait_status(&id, &["finished"]).await;
    assert_eq!(
        std::fs::read_to_string(back_dir.join("back.txt")).unwrap(),
        "onetwoone two\n"
    );
    let after_a = all_events(&a, &id).await;
    assert_eq!(ids(&after_a[..after_b.len()]), ids(&after_b));
    let (status, _) = b
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(status, 409, "the second hop fenced the target too");
}

/// A conversation that is not at a step boundary is refused, unless forced; bad capsules and
/// an LLM the target cannot run are named; the source stays runnable throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_moves_are_refused_with_the_cause_and_the_source_stays_as_it_was() {
    let a = TestServer::start().await;
    let b = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "printf kept > kept.txt"})),
        Step::tool_call("terminal", json!({"command": "printf never > never.txt"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let id = a.create(&llm, json!({})).await;
    a.post(
        &format!("/api/conversations/{id}/confirmation_policy"),
        json!({"policy": {"kind": "AlwaysConfirm"}}),
    )
    .await;
    a.message(&id, "go", true).await;
    a.wait_status(&id, &["waiting_for_confirmation"]).await;

    // An approval is pending: refused, then forced (the pending action is rejected).
    let (status, body) = export(&a, &id, json!({})).await;
    assert_eq!(status, 409, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("waits for approval"));
    let (status, capsule) = export(&a, &id, json!({"force": true})).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&capsule));
    assert!(
        !a.workspace.join("kept.txt").exists(),
        "nothing ran unapproved"
    );

    // Damaged, truncated, foreign and newer capsules.
    let mut flipped = capsule.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x5a;
    for (bytes, expect) in [
        (capsule[..capsule.len() / 3].to_vec(), "damaged"),
        (flipped, "capsule"),
        (b"not a capsule".to_vec(), "not a Tandem capsule"),
    ] {
        let (status, body) = import(&b, bytes, json!({})).await;
        assert_eq!(status, 422, "{body}");
        assert!(body.to_string().contains(expect), "{expect}: {body}");
    }
    let (status, body) = import(&b, capsule.clone(), json!({"working_dir": "relative/dir"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("working_dir"), "{body}");
    let busy = b.home.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("other.txt"), "someone else's").unwrap();
    let (status, body) = import(
        &b,
        capsule.clone(),
        json!({"working_dir": busy.to_string_lossy()}),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("not empty"), "{body}");
    assert_eq!(
        std::fs::read_to_string(busy.join("other.txt")).unwrap(),
        "someone else's",
        "nothing of it was touched"
    );
    let (status, _) = b.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 404, "a refused import leaves nothing behind");

    // Imported once; twice is a conflict naming the id.
    let (status, imported) = import(&b, capsule.clone(), json!({})).await;
    assert_eq!(status, 201, "{imported}");
    let (status, body) = import(&b, capsule.clone(), json!({})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("already exists"), "{body}");

    // The source was never fenced: it still runs (the rejected action stays rejected).
    a.post(
        &format!("/api/conversations/{id}/confirmation_policy"),
        json!({"policy": {"kind": "NeverConfirm"}}),
    )
    .await;
    a.message(&id, "go on", true).await;
    a.wait_status(&id, &["finished"]).await;

    // An LLM the target has no key for is refused before anything changes, and accepted with
    // an `llm` given.
    let c = TestServer::start().await;
    let body = json!({
        "agent": {
            "llm": {"model": "anthropic/claude-remote-only", "api_key": "sk-remote", "base_url": "https://llm.example.invalid", "usage_id": "agent"},
            "tools": [{"name": "terminal", "params": {}}],
            "kind": "Agent"
        },
        "workspace": {"kind": "LocalWorkspace", "working_dir": c.workspace.to_string_lossy()}
    });
    let (status, info) = c.post("/api/conversations", body).await;
    assert_eq!(status, 201, "{info}");
    let remote_id = info["id"].as_str().unwrap().to_owned();
    let (status, capsule) = export(&c, &remote_id, json!({})).await;
    assert_eq!(status, 200);
    let (status, body) = import(&b, capsule.clone(), json!({})).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body.to_string()
            .contains("cannot run the conversation's LLM anthropic/claude-remote-only"),
        "{body}"
    );
    let (status, _) = b.get(&format!("/api/conversations/{remote_id}")).await;
    assert_eq!(status, 404);
    let (status, body) = import(
        &b,
        capsule,
        json!({"llm": {"model": "anthropic/claude-remote-only", "api_key": "sk-target", "base_url": "https://llm.example.invalid", "usage_id": "agent"}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");

    // A moved conversation answers its sockets (but the events') with 409 too.
    let (status, _) = b
        .post(
            &format!("/api/conversations/{remote_id}/moved"),
            json!({"url": "http://127.0.0.1:9", "conversation_id": remote_id}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = b
        .post(
            &format!("/api/conversations/{remote_id}/moved"),
            json!({"url": "http://127.0.0.1:10", "conversation_id": remote_id}),
        )
        .await;
    assert_eq!(status, 409, "moved elsewhere already: {body}");
    assert_eq!(body["moved_to"]["url"], "http://127.0.0.1:9");
}

/// A login made in the browser before the move holds after it: the cookies, the origin's
/// storage and the open tabs (with the active one) move with the conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_browser_moves_with_its_login_its_storage_and_its_tabs() {
    let site = tandem_testkit::site::serve().await;
    let a = TestServer::start().await;
    let b = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call(
            "browser_navigate",
            json!({"url": site.url("/sign-in?user=ada")}),
        ),
        Step::tool_call(
            "browser_navigate",
            json!({"url": site.url("/login.html"), "new_tab": true}),
        ),
        Step::tool_call("finish", json!({"message": "signed in"})),
        Step::tool_call(
            "browser_navigate",
            json!({"url": site.url("/account.html")}),
        ),
        Step::tool_call("browser_get_content", json!({"extract_links": false})),
        Step::tool_call("finish", json!({"message": "checked"})),
    ]);
    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "browser_tool_set"}]);
    let id = a.create(&llm, json!({"agent": agent})).await;
    a.message(&id, "sign in", true).await;
    a.wait_status(&id, &["finished"]).await;

    let (status, capsule) = export(&a, &id, json!({})).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&capsule));
    let (status, imported) = import(&b, capsule, json!({})).await;
    assert_eq!(status, 201, "{imported}");
    let (status, state) = b
        .get(&format!("/api/conversations/{id}/browser/state"))
        .await;
    assert_eq!(status, 200, "{state}");
    let tabs: Vec<(String, bool)> = state["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["url"].as_str().unwrap_or_default().to_owned(),
                t["active"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        tabs,
        vec![
            (site.url("/sign-in?user=ada"), false),
            (site.url("/login.html"), true)
        ],
        "both tabs reopened, the second active: {state}"
    );

    // On the target, the site still knows who is signed in, and the stored theme is there.
    b.message(&id, "check", true).await;
    b.wait_status(&id, &["finished"]).await;
    let events = all_events(&b, &id).await;
    let account = events
        .iter()
        .rfind(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "browser_get_content")
        .map(|e| e["observation"].to_string())
        .unwrap_or_default();
    assert!(
        account.contains("Signed in as ada"),
        "the login survived the move: {account}"
    );
    assert!(
        account.contains("Theme: dark"),
        "and the origin's storage: {account}"
    );
}

/// Imported as arriving, the conversation does not run on the target until its arrival is
/// accepted; rejected, it is gone with the folder its import made. The source's fence is
/// refused when the source went on since the export.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_arriving_copy_runs_only_once_its_move_ends() {
    let a = TestServer::start().await;
    let b = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "printf one > one.txt"})),
        Step::tool_call("finish", json!({"message": "one"})),
        Step::tool_call("terminal", json!({"command": "printf two > two.txt"})),
        Step::tool_call("finish", json!({"message": "two"})),
    ]);
    let id = a.create(&llm, json!({})).await;
    a.message(&id, "first", true).await;
    a.wait_status(&id, &["finished"]).await;
    let (status, capsule) = export(&a, &id, json!({})).await;
    assert_eq!(status, 200);

    // Arriving: read-only on the target.
    let (status, imported) = import(&b, capsule.clone(), json!({"pending": true})).await;
    assert_eq!(status, 201, "{imported}");
    let folder = std::path::PathBuf::from(imported["working_dir"].as_str().unwrap());
    assert!(folder.join("one.txt").is_file());
    let (status, refused) = b
        .post(
            &format!("/api/conversations/{id}/events"),
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "run": true}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["code"], "arriving", "{refused}");
    let (status, _) = b.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200, "it reads");

    // Rejected: gone, with its folder; rejecting again is harmless.
    let reject = json!({"accept": false});
    let (status, _) = b
        .post(&format!("/api/conversations/{id}/arrival"), reject.clone())
        .await;
    assert_eq!(status, 204);
    let (status, _) = b.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 404);
    assert!(!folder.exists(), "the folder its import made is gone");
    let (status, _) = b
        .post(&format!("/api/conversations/{id}/arrival"), reject)
        .await;
    assert_eq!(status, 204);

    // The source went on after the export: its fence is refused, nothing is left behind.
    let (status, imported) = import(&b, capsule, json!({"pending": true})).await;
    assert_eq!(status, 201, "{imported}");
    a.message(&id, "second", true).await;
    a.wait_status(&id, &["finished"]).await;
    let fence = json!({"url": b.url(""), "conversation_id": id, "last_event_id": imported["last_event_id"]});
    let (status, refused) = a
        .post(&format!("/api/conversations/{id}/moved"), fence)
        .await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains("went on here"),
        "{refused}"
    );
    assert!(a.workspace.join("two.txt").is_file());

    // Exported again, fenced, accepted: it runs on the target.
    let (status, _) = b
        .post(
            &format!("/api/conversations/{id}/arrival"),
            json!({"accept": false}),
        )
        .await;
    assert_eq!(status, 204);
    let (_, capsule) = export(&a, &id, json!({})).await;
    let (status, imported) = import(&b, capsule, json!({"pending": true})).await;
    assert_eq!(status, 201, "{imported}");
    let fence = json!({"url": b.url(""), "conversation_id": id, "last_event_id": imported["last_event_id"]});
    let (status, body) = a
        .post(&format!("/api/conversations/{id}/moved"), fence.clone())
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = a
        .post(&format!("/api/conversations/{id}/moved"), fence)
        .await;
    assert_eq!(
        status, 200,
        "a fence repeated (after a crash cut its answer) is harmless: {body}"
    );
    let (status, info) = b
        .post(
            &format!("/api/conversations/{id}/arrival"),
            json!({"accept": true}),
        )
        .await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["id"], id);
    let (status, body) = b
        .post(
            &format!("/api/conversations/{id}/arrival"),
            json!({"accept": false}),
        )
        .await;
    assert_eq!(
        status, 409,
        "an arrived conversation is not deleted: {body}"
    );
    let (status, _) = b
        .post(
            &format!("/api/conversations/{id}/events"),
            json!({"role": "user", "content": [{"type": "text", "text": "go on"}], "run": false}),
        )
        .await;
    assert_eq!(status, 200);
}

/// Moving back onto the record it left, a conversation carries only what changed since: the
/// folder it left is brought up to date in place (files changed, added and removed). A folder
/// changed meanwhile is not a base: the delta is refused, naming why.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_move_back_carries_only_what_changed_into_the_folder_it_left() {
    let a = TestServer::start().await;
    let b = TestServer::start().await;
    let mut big = vec![0u8; 2 << 20];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for byte in &mut big {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *byte = x as u8;
    }
    std::fs::write(a.workspace.join("big.bin"), &big).unwrap();
    std::fs::write(a.workspace.join("gone.txt"), "to be removed").unwrap();
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "printf v1 > notes.txt"})),
        Step::tool_call("finish", json!({"message": "one"})),
        Step::tool_call(
            "terminal",
            json!({"command": "printf v2 > notes.txt && rm gone.txt && printf new > added.txt"}),
        ),
        Step::tool_call("finish", json!({"message": "two"})),
    ]);
    let id = a.create(&llm, json!({})).await;
    a.message(&id, "first", true).await;
    a.wait_status(&id, &["finished"]).await;
    let (status, capsule) = export(&a, &id, json!({})).await;
    assert_eq!(status, 200);
    assert!(capsule.len() > 2 << 20, "the first move carries everything");
    let (status, imported) = import(&b, capsule, json!({})).await;
    assert_eq!(status, 201, "{imported}");
    let fence = json!({"url": b.url(""), "conversation_id": id, "last_event_id": imported["last_event_id"]});
    let (status, _) = a
        .post(&format!("/api/conversations/{id}/moved"), fence)
        .await;
    assert_eq!(status, 200);
    b.message(&id, "second", true).await;
    b.wait_status(&id, &["finished"]).await;

    // A still holds the folder as it left: a base.
    let (status, record) = a.get(&format!("/api/conversations/{id}/moved")).await;
    assert_eq!(status, 200, "{record}");
    let base = record["workspace_base"]
        .as_str()
        .unwrap_or_else(|| panic!("no base: {record}"))
        .to_owned();
    let (status, delta) = export(&b, &id, json!({"base_commit": base})).await;
    assert_eq!(status, 200);
    assert!(
        delta.len() < 256 << 10,
        "only what changed: {} bytes",
        delta.len()
    );

    // A folder changed meanwhile is no base: refused, nothing written.
    std::fs::write(a.workspace.join("stray.txt"), "meanwhile").unwrap();
    let (status, body) = import(&a, delta.clone(), json!({})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("move it again"), "{body}");
    assert_eq!(
        std::fs::read_to_string(a.workspace.join("notes.txt")).unwrap(),
        "v1"
    );
    let (_, record) = a.get(&format!("/api/conversations/{id}/moved")).await;
    assert!(record["workspace_base"].is_null(), "{record}");
    std::fs::remove_file(a.workspace.join("stray.txt")).unwrap();

    // As it left: brought up to date in place.
    let (status, imported) = import(&a, delta, json!({})).await;
    assert_eq!(status, 201, "{imported}");
    assert_eq!(
        std::path::Path::new(imported["working_dir"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        a.workspace.canonicalize().unwrap(),
        "the folder it left"
    );
    assert_eq!(
        std::fs::read_to_string(a.workspace.join("notes.txt")).unwrap(),
        "v2"
    );
    assert_eq!(
        std::fs::read_to_string(a.workspace.join("added.txt")).unwrap(),
        "new"
    );
    assert!(
        !a.workspace.join("gone.txt").exists(),
        "removed there, removed here"
    );
    assert_eq!(std::fs::read(a.workspace.join("big.bin")).unwrap(), big);
}
