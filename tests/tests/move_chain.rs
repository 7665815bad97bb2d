//! A conversation paused mid-task moves local → Docker sandbox → `tandem serve` on another
//! port → local, and goes on with its task after each hop: every event there in order, its
//! files (untracked ones too), the shell's folder and its exported variables.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer, api, tandem_bin};
use tandem_testkit::{Script, ScriptedLlmServer, Step};

use crate::sandbox::{Detached, PERSON, Place, text};

/// `tandem <args>` in `home`, with the scripted model as the LLM settings (the sandbox and the
/// local side take their profile from them).
fn tandem_llm(home: &Path, llm: &ScriptedLlmServer, args: &[&str]) -> Output {
    Command::new(tandem_bin().unwrap())
        .args(args)
        .env("TANDEM_HOME", home)
        .env_remove("TANDEM_SERVER_URL")
        .env_remove("TANDEM_SESSION_KEY")
        .env("LLM_MODEL", "openai/fake")
        .env("LLM_BASE_URL", llm.base_url())
        .env("LLM_API_KEY", "x")
        .output()
        .unwrap()
}

/// A part of the task: a command (rated low risk), then finishing with `message`.
fn part(command: &str, message: &str) -> [Step; 2] {
    [
        Step::tool_call(
            "terminal",
            json!({"command": command, "security_risk": "LOW"}),
        ),
        Step::tool_call("finish", json!({"message": message})),
    ]
}

/// The one conversation of `home`: its folder name and its id.
fn only_conversation(home: &Path) -> (String, String) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(home.join("conversations"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1);
    let hex = dirs
        .remove(0)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let id = format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    (hex, id)
}

fn local_event_ids(home: &Path, id: &str) -> Vec<String> {
    let dir = home
        .join("conversations")
        .join(id.replace('-', ""))
        .join("events");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("event-") && n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            // event-NNNNN-<id>.json
            n.trim_end_matches(".json")
                .splitn(3, '-')
                .nth(2)
                .unwrap()
                .to_owned()
        })
        .collect()
}

async fn server_event_ids(url: &str, key: &str, id: &str) -> Vec<String> {
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    let mut page: Option<String> = None;
    loop {
        let path = match &page {
            Some(p) => format!("{url}/api/conversations/{id}/events/search?limit=100&page_id={p}"),
            None => format!("{url}/api/conversations/{id}/events/search?limit=100"),
        };
        let (status, body) = api(&http, reqwest::Method::GET, &path, key, None).await;
        assert_eq!(status, 200, "{body}");
        ids.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_str().unwrap().to_owned()),
        );
        match body["next_page_id"].as_str() {
            Some(p) => page = Some(p.to_owned()),
            None => return ids,
        }
    }
}

/// Sends `text` to conversation `id` on `url` and waits until it finishes.
async fn go_on(url: &str, key: &str, id: &str, text: &str) -> Value {
    let http = reqwest::Client::new();
    let (status, body) = api(
        &http,
        reqwest::Method::POST,
        &format!("{url}/api/conversations/{id}/events"),
        key,
        Some(json!({"role": "user", "content": [{"type": "text", "text": text}], "run": true})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let (_, conv) = api(
            &http,
            reqwest::Method::GET,
            &format!("{url}/api/conversations/{id}"),
            key,
            None,
        )
        .await;
        match conv["execution_status"].as_str() {
            Some("finished") => return conv,
            Some("error" | "stuck") => {
                let (_, events) = api(
                    &http,
                    reqwest::Method::GET,
                    &format!("{url}/api/conversations/{id}/events/search?limit=100"),
                    key,
                    None,
                )
                .await;
                let last: Vec<String> = events["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .rev()
                    .take(3)
                    .map(|e| e.to_string().chars().take(1500).collect())
                    .collect();
                panic!("{}: {last:#?}", conv["execution_status"])
            }
            _ => {}
        }
        assert!(Instant::now() < deadline, "still running: {conv}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn assert_prefix(before: &[String], after: &[String], hop: &str) {
    assert!(
        after.len() > before.len() || after == before,
        "{hop}: {after:?}"
    );
    assert_eq!(
        &after[..before.len()],
        before,
        "{hop}: 0 lost, 0 duplicated, in order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_moves_local_to_sandbox_to_server_to_local_and_finishes_its_task() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let llm = ScriptedLlmServer::start(
        Script::new(
            [
                part("mkdir -p sub && cd sub && printf one > one.txt", "part one"),
                part(
                    "printf \"two:$(pwd)\" > two.txt && export CHAIN_VAR=kept",
                    "part two",
                ),
                part("printf \"three:$CHAIN_VAR\" > three.txt", "part three"),
                part(
                    "cat one.txt two.txt three.txt > all.txt && echo \":$CHAIN_VAR\" >> all.txt",
                    "all done",
                ),
            ]
            .concat(),
        )
        .with_no_tools_text("Move chain"),
    );

    // Part one, here.
    let w = work.to_string_lossy().into_owned();
    let out = tandem_llm(&home, &llm, &["run", "part one", "--workspace", &w]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::write(work.join("untracked.txt"), "the person's note").unwrap();
    let (_, id) = only_conversation(&home);
    let before = local_event_ids(&home, &id);

    // Hop 1: into a sandbox, whose workspace is a new folder of the person's.
    let sb_work = p.dir.path().join("sandbox-work");
    std::fs::create_dir_all(&sb_work).unwrap();
    std::os::unix::fs::chown(&sb_work, Some(PERSON), Some(PERSON)).unwrap();
    let sb_w = sb_work.to_string_lossy().into_owned();
    let out = tandem_llm(
        &home,
        &llm,
        &["move", &id, "--to", "sandbox", "--working-dir", &sb_w],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sandbox: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .filter(|v| v.get("session_key").is_some())
        })
        .unwrap_or_else(|| panic!("no sandbox line: {}", text(&out)));
    let _sandbox_guard = Detached {
        home: home.clone(),
        id: sandbox["id"].as_str().unwrap().to_owned(),
    };
    let (sb_url, sb_key) = (
        sandbox["url"].as_str().unwrap().to_owned(),
        sandbox["session_key"].as_str().unwrap().to_owned(),
    );
    let in_sandbox = server_event_ids(&sb_url, &sb_key, &id).await;
    assert_eq!(in_sandbox, before, "hop 1: every event");
    let listing = |dir: &Path| -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                }
                found.push(e.path().to_string_lossy().into_owned());
            }
        }
        found
    };
    assert_eq!(
        std::fs::read_to_string(sb_work.join("sub/one.txt")).unwrap_or_else(|e| panic!(
            "{e}: {:?} (source {:?})\n{}",
            listing(&sb_work),
            listing(&work),
            text(&out)
        )),
        "one"
    );
    assert_eq!(
        std::fs::read_to_string(sb_work.join("untracked.txt")).unwrap_or_else(|e| panic!(
            "{e}: {:?} (source {:?})\n{}",
            listing(&sb_work),
            listing(&work),
            text(&out)
        )),
        "the person's note"
    );
    go_on(&sb_url, &sb_key, &id, "part two").await;
    assert_eq!(
        std::fs::read_to_string(sb_work.join("sub/two.txt")).unwrap_or_else(|e| panic!(
            "{e}: {:?}\n{:?}",
            listing(&sb_work),
            crate::sandbox::tool_results(&llm)
        )),
        "two:/workspace/sub",
        "the shell's folder came along (from its last command: `tandem run` had ended)"
    );
    let after_sandbox = server_event_ids(&sb_url, &sb_key, &id).await;
    assert_prefix(&before, &after_sandbox, "sandbox");

    // Hop 2: to `tandem serve` on another port.
    let serve_home = p.dir.path().join("serve-home");
    let served = TandemServer::start(
        &serve_home,
        &[
            ("LLM_MODEL", "openai/fake".into()),
            ("LLM_BASE_URL", llm.base_url()),
            ("LLM_API_KEY", "x".into()),
        ],
    )
    .unwrap();
    let out = tandem_llm(
        &home,
        &llm,
        &[
            "move",
            &id,
            "--server",
            &sb_url,
            "--session-key",
            &sb_key,
            "--to",
            &served.url,
            "--to-key",
            KEY,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        server_event_ids(&served.url, KEY, &id).await,
        after_sandbox,
        "hop 2: every event"
    );
    let conv = go_on(&served.url, KEY, &id, "part three").await;
    let served_ws = PathBuf::from(conv["workspace"]["working_dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(served_ws.join("sub/three.txt")).unwrap_or_else(|e| panic!(
            "{e}: {:?}\n{:?}\n{}",
            listing(&served_ws),
            crate::sandbox::tool_results(&llm),
            text(&crate::tandem(
                &home,
                &["sandbox", "logs", sandbox["id"].as_str().unwrap()]
            ))
        )),
        "three:kept",
        "the folder and the variable exported in the sandbox came along"
    );
    let after_served = server_event_ids(&served.url, KEY, &id).await;
    assert_prefix(&after_sandbox, &after_served, "served");

    // Hop 3: back here, into a new folder; the old record is replaced and it finishes.
    let back = p.dir.path().join("back");
    let back_w = back.to_string_lossy().into_owned();
    let out = tandem_llm(
        &home,
        &llm,
        &[
            "move",
            &id,
            "--server",
            &served.url,
            "--session-key",
            KEY,
            "--to",
            "local",
            "--working-dir",
            &back_w,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        local_event_ids(&home, &id),
        after_served,
        "hop 3: every event"
    );
    let out = tandem_llm(&home, &llm, &["resume", &id, "--message", "part four"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(back.join("sub/all.txt")).unwrap(),
        "onetwo:/workspace/subthree:kept:kept\n",
        "the task finished with every part"
    );
    assert_eq!(
        std::fs::read_to_string(back.join("untracked.txt")).unwrap(),
        "the person's note"
    );
    assert_prefix(&after_served, &local_event_ids(&home, &id), "back");
}

/// Toward an upstream OpenHands server (which cannot import a conversation) a move is refused
/// unless asked as lossy; then the upstream server has a new conversation with the workspace's
/// files and a summary of the old one as its first message, and goes on from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lossy_move_to_an_upstream_server_carries_the_files_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("upstream");
    let upstream = {
        let run_dir = run_dir.clone();
        tokio::task::spawn_blocking(move || tandem_e2e::UpstreamServer::start(&run_dir))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("{e:#}"))
    };
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let llm = ScriptedLlmServer::start(
        Script::new(
            [
                part(
                    "mkdir -p src && printf 'print(1)' > src/app.py",
                    "made the app",
                )
                .to_vec(),
                // Upstream: the agent goes on from the summary (upstream's terminal now and
                // then loses a fresh session's first command under load; what is under test
                // here is what arrives).
                // (A few: upstream repeats a call its client gave up on under load.)
                vec![Step::tool_call("finish", json!({"message": "read it upstream"})); 4],
            ]
            .concat(),
        )
        .with_no_tools_text("Lossy move"),
    );
    let w = work.to_string_lossy().into_owned();
    let out = tandem_llm(&home, &llm, &["run", "make the app", "--workspace", &w]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (hex, id) = only_conversation(&home);

    // Not asked as lossy: refused, naming --lossy; nothing changes.
    let out = tandem_llm(
        &home,
        &llm,
        &["move", &id, "--to", &upstream.url, "--to-key", KEY],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("--lossy"), "{}", text(&out));
    assert!(
        !home
            .join("conversations")
            .join(&hex)
            .join("tandem_moved.json")
            .exists()
    );

    let target_dir = run_dir.join("project").join("moved");
    let t = target_dir.to_string_lossy().into_owned();
    let out = tandem_llm(
        &home,
        &llm,
        &[
            "move",
            &id,
            "--to",
            &upstream.url,
            "--to-key",
            KEY,
            "--lossy",
            "--working-dir",
            &t,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("Lossy move"), "{stdout}");
    let new_id = stdout
        .split("as the new conversation ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no new id: {stdout}"))
        .to_owned();
    assert_eq!(
        std::fs::read_to_string(target_dir.join("src/app.py")).unwrap(),
        "print(1)"
    );

    // Its first message is the summary, labelled lossy.
    let http = reqwest::Client::new();
    let (status, page) = api(
        &http,
        reqwest::Method::GET,
        &format!(
            "{}/api/conversations/{new_id}/events/search?limit=100",
            upstream.url
        ),
        KEY,
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let first = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "MessageEvent" && e["source"] == "user")
        .map(|e| {
            e["llm_message"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .unwrap_or_else(|| panic!("no first message: {page}"));
    for needle in [
        "lossy move",
        "make the app",
        "made the app",
        "src/app.py",
        "mkdir -p src",
    ] {
        assert!(
            first.contains(needle),
            "`{needle}` not in the summary:\n{first}"
        );
    }

    // It goes on upstream from there.
    go_on(&upstream.url, KEY, &new_id, "go on").await;

    // Here: a record naming the new conversation; `tandem resume` refuses it.
    let record = std::fs::read_to_string(
        home.join("conversations")
            .join(&hex)
            .join("tandem_moved.json"),
    )
    .unwrap();
    assert!(
        record.contains(&new_id) && record.contains(&upstream.url),
        "{record}"
    );
    let out = tandem_llm(&home, &llm, &["resume", &id, "--message", "again"]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
}
