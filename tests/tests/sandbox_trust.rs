//! What a sandbox promises the person, on a real Docker daemon with the image `tandem sandbox
//! build` made: the agent's commands find no key anywhere in the container (environment,
//! `/proc/*/environ`, `/proc/*/cmdline`, readable files) and open nothing with what they find;
//! no port the sandbox opened greets with RFB; no file changes owner (the agent takes the
//! workspace owner's uid, a root-owned folder needs an explicit opt-in); conversations live on
//! the host and survive `docker kill` at random moments, finishing in a new sandbox.
//!
//! Skipped (with the reason) without a daemon or the image, unless TANDEM_REQUIRE_DOCKER=1.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::tandem_bin;
use tandem_testkit::{Script, ScriptedLlmServer, Step};

use super::sandbox::{Detached, PERSON, Place, sandboxes_of, text, tool_results};

/// The LLM key the sandbox's server is given (it must never reach the agent).
const LLM_KEY: &str = "sk-llm-key-the-agent-must-not-see-4242";
/// A provider key in the starter's environment (never forwarded at all).
const PROVIDER_KEY: &str = "sk-provider-key-never-forwarded-4343";
/// The key a conversation was created with (kept in the server's memory only).
const CONVERSATION_KEY: &str = "sk-conversation-key-in-memory-4444";

/// `tandem sandbox start` on `work` with an LLM at `llm_url` (its key in `LLM_API_KEY`);
/// the started sandbox's JSON, removed when the guard drops.
fn start(home: &Path, work: &Path, llm_url: &str, extra: &[&str]) -> (Value, Detached) {
    let out = start_output(home, work, llm_url, extra);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sb: Value = serde_json::from_slice(&out.stdout).unwrap();
    let guard = Detached {
        home: home.to_owned(),
        id: sb["id"].as_str().unwrap().to_owned(),
    };
    (sb, guard)
}

fn start_output(home: &Path, work: &Path, llm_url: &str, extra: &[&str]) -> Output {
    let w = work.to_string_lossy().into_owned();
    let mut args = vec!["sandbox", "start", "--workspace", &w];
    args.extend_from_slice(extra);
    Command::new(tandem_bin().unwrap())
        .args(&args)
        .env("TANDEM_HOME", home)
        .env_remove("TANDEM_SESSION_KEY")
        .env("LLM_MODEL", "openai/fake")
        .env("LLM_BASE_URL", llm_url)
        .env("LLM_API_KEY", LLM_KEY)
        .env("OPENAI_API_KEY", PROVIDER_KEY)
        .output()
        .unwrap()
}

/// A blocking client of a sandbox's API (its own runtime: the tests are synchronous).
struct Api {
    url: String,
    key: String,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

impl Api {
    fn of(sb: &Value) -> Self {
        Self {
            url: sb["url"].as_str().unwrap().to_owned(),
            key: sb["session_key"].as_str().unwrap().to_owned(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        }
    }

    /// GET `path`: its status and JSON body (Null when not JSON), or the transport error.
    fn try_get(&self, path: &str) -> Result<(u16, Value), String> {
        self.rt.block_on(async {
            let r = self
                .http
                .get(format!("{}{path}", self.url))
                .header("X-Session-API-Key", &self.key)
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = r.status().as_u16();
            Ok((status, r.json().await.unwrap_or(Value::Null)))
        })
    }

    fn get(&self, path: &str) -> Value {
        let (status, body) = self.try_get(path).unwrap();
        assert!((200..300).contains(&status), "GET {path}: {status} {body}");
        body
    }

    fn post(&self, path: &str, body: Value) -> Value {
        self.rt.block_on(async {
            let r = self
                .http
                .post(format!("{}{path}", self.url))
                .header("X-Session-API-Key", &self.key)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = r.status();
            let text = r.text().await.unwrap();
            assert!(status.is_success(), "POST {path}: {status} {text}");
            serde_json::from_str(&text).unwrap_or(Value::Null)
        })
    }

    /// A conversation in /workspace driven by `llm`, started on `task`; its id.
    fn converse(&self, llm: &ScriptedLlmServer, task: &str) -> String {
        let conv = self.post(
            "/api/conversations",
            json!({
                "agent": {
                    "llm": {"model": "openai/fake", "base_url": llm.base_url(), "api_key": CONVERSATION_KEY, "num_retries": 0},
                    "tools": [{"name": "terminal", "params": {}}, {"name": "file_editor", "params": {}}],
                    "include_default_tools": ["FinishTool"],
                    "kind": "Agent"
                },
                "workspace": {"kind": "LocalWorkspace", "working_dir": "/workspace"},
                "initial_message": {"role": "user", "content": [{"type": "text", "text": task}], "run": true}
            }),
        );
        conv["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{conv}"))
            .to_owned()
    }

    fn status(&self, id: &str) -> String {
        self.get(&format!("/api/conversations/{id}"))["execution_status"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits (a generous "it happened at all" guard) until conversation `id` is finished.
    fn wait_finished(&self, id: &str) {
        let started = Instant::now();
        loop {
            let status = self.status(id);
            if status == "finished" {
                return;
            }
            assert!(
                !matches!(status.as_str(), "error" | "stuck"),
                "conversation {id} ended {status}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "conversation {id} still {status}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The ids of every event of conversation `id` the server returns.
    fn event_ids(&self, id: &str) -> Result<BTreeSet<String>, String> {
        let mut ids = BTreeSet::new();
        let mut page: Option<String> = None;
        loop {
            let mut path = format!("/api/conversations/{id}/events/search?limit=100");
            if let Some(p) = &page {
                path.push_str(&format!("&page_id={p}"));
            }
            let (status, v) = self.try_get(&path)?;
            if status != 200 {
                return Err(format!("{status}: {v}"));
            }
            for e in v["items"].as_array().into_iter().flatten() {
                ids.insert(e["id"].as_str().unwrap_or_default().to_owned());
            }
            match v["next_page_id"].as_str() {
                Some(p) if !p.is_empty() => page = Some(p.to_owned()),
                _ => return Ok(ids),
            }
        }
    }
}

fn inspect(id: &str) -> Value {
    let out = Command::new("docker")
        .args(["inspect", id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone()
}

/// The host pids of the container's processes.
fn pids_of(id: &str) -> Vec<u32> {
    let out = Command::new("docker")
        .args(["top", id, "-eo", "pid"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// A script the agent runs: it gathers everything it can read where keys hide (its
/// environment, every `/proc/*/environ` and `/proc/*/cmdline`, readable files under the
/// places a server keeps things) into loot.txt, then tries every token-like string of it as a
/// session key against the sandbox's server (URL in $1), writing each answer to tries.txt.
const HOSTILE: &str = r#"#!/bin/bash
url="$1"
cd /workspace
loot=loot.txt
: >"$loot"
{
  echo "== whoami: $(id)"
  echo "== env"; env
  echo "== ls"; ls -la /run/tandem /var/lib/tandem 2>&1; cat /run/tandem/session-key 2>&1
  for f in /proc/[0-9]*/environ; do echo "== $f"; tr '\0' '\n' <"$f"; echo; done
  for f in /proc/[0-9]*/cmdline; do echo "== $f"; tr '\0' ' ' <"$f"; echo; done
  find /run /var/lib/tandem /home /root /tmp /etc/tandem /opt /usr/local/bin /srv \
    -xdev -type f -readable -size -2M 2>/dev/null |
    grep -v -e '^/workspace' -e '/usr/local/bin/tandem$' |
    while read -r f; do echo "== $f"; head -c 65536 "$f"; echo; done
} >>"$loot" 2>/dev/null
grep -aoE '[A-Za-z0-9_+/=.-]{16,}' "$loot" | sort -u >candidates.txt
: >tries.txt
echo "nokey $(curl -s -o /dev/null -w '%{http_code}' -m 5 "$url/api/conversations/search")" >>tries.txt
while read -r c; do
  code="$(curl -s -o /dev/null -w '%{http_code}' -m 5 -H "X-Session-API-Key: $c" "$url/api/conversations/search")"
  case "$code" in 2*) echo "OPENED $code with $c" >>tries.txt ;; 401) ;; *) echo "other $code" >>tries.txt ;; esac
done <candidates.txt
echo "tried $(wc -l <candidates.txt)" >>tries.txt
"#;

#[test]
fn the_agents_commands_find_no_key_in_the_sandbox_and_open_nothing() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    std::fs::write(work.join("hostile.sh"), HOSTILE).unwrap();
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call(
                "terminal",
                json!({"command": "bash /workspace/hostile.sh; tail -n 3 tries.txt", "timeout": 900, "security_risk": "LOW"}),
            ),
            Step::tool_call("finish", json!({"message": "searched"})),
        ])
        .with_no_tools_text("Hostile"),
    );
    let (sb, _guard) = start(&home, &work, &llm.base_url(), &[]);
    let id = sb["id"].as_str().unwrap();
    let key = sb["session_key"].as_str().unwrap().to_owned();
    let api = Api::of(&sb);
    // The script is told the server's URL (the agent could find it by scanning ports).
    std::fs::write(
        work.join("hostile.sh"),
        HOSTILE.replace("url=\"$1\"", &format!("url=\"{}\"", api.url)),
    )
    .unwrap();
    let cid = api.converse(&llm, "look around");
    api.wait_finished(&cid);

    // Binary files too (whatever it could read): bytes, read leniently.
    let loot = String::from_utf8_lossy(&std::fs::read(work.join("loot.txt")).unwrap()).into_owned();
    let tries = std::fs::read_to_string(work.join("tries.txt")).unwrap();
    // The search ran, as the workspace's owner, over many processes and files.
    assert!(
        loot.contains(&format!("uid={PERSON}")),
        "{}",
        loot.chars().take(200).collect::<String>()
    );
    assert!(loot.contains("== /proc/1/cmdline"), "no /proc search");
    assert!(
        loot.contains("/usr/local/bin/tandem serve"),
        "the server's command line was seen"
    );
    let tried: usize = tries
        .lines()
        .find_map(|l| l.strip_prefix("tried "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{tries}"));
    assert!(tried > 20, "only {tried} candidates: {tries}");
    // It tried the server's folders, and was turned away.
    assert!(
        loot.contains("cannot open directory '/run/tandem': Permission denied")
            && loot.contains("/run/tandem/session-key: Permission denied"),
        "{}",
        loot.chars().take(2000).collect::<String>()
    );
    for secret in [key.as_str(), LLM_KEY, PROVIDER_KEY, CONVERSATION_KEY] {
        assert!(!loot.contains(secret), "the agent found {secret}");
    }
    assert!(tries.contains("nokey 401"), "{tries}");
    assert!(
        !tries.contains("OPENED"),
        "a candidate opened the API: {tries}"
    );

    // Nor is any key in an environment of the container (what `docker inspect` shows, and
    // every process's), read here as root on the host.
    let env = inspect(id)["Config"]["Env"].to_string();
    for secret in [key.as_str(), LLM_KEY, PROVIDER_KEY] {
        assert!(
            !env.contains(secret),
            "docker inspect shows {secret}: {env}"
        );
    }
    for pid in pids_of(id) {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ);
        for secret in [key.as_str(), LLM_KEY, PROVIDER_KEY, CONVERSATION_KEY] {
            assert!(
                !environ.contains(secret),
                "process {pid}'s environment holds {secret}"
            );
        }
    }
    // The key still works for the person, and the model never saw a key either.
    assert!(api.get("/api/conversations/search")["items"].is_array());
    let results = tool_results(&llm).join("\n");
    assert!(!results.contains(&key) && !results.contains(LLM_KEY));
}

/// The TCP ports the container's processes listen on.
fn listening_ports(id: &str) -> BTreeSet<u16> {
    let mut ports = BTreeSet::new();
    for pid in pids_of(id) {
        let inodes: BTreeSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter_map(|l| {
                l.to_string_lossy()
                    .strip_prefix("socket:[")
                    .map(|s| s.trim_end_matches(']').to_owned())
            })
            .collect();
        for table in ["tcp", "tcp6"] {
            let t = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
            for line in t.lines().skip(1) {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() > 9 && f[3] == "0A" && inodes.contains(f[9]) {
                    let port = f[1].rsplit(':').next().unwrap();
                    ports.insert(u16::from_str_radix(port, 16).unwrap());
                }
            }
        }
    }
    ports
}

#[test]
fn no_port_the_sandbox_opened_greets_with_rfb_without_the_key() {
    use std::io::Read;
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let (sb, _guard) = start(&home, &work, "http://127.0.0.1:9/v1", &[]);
    let id = sb["id"].as_str().unwrap();
    let api = Api::of(&sb);
    assert_eq!(api.get("/server_info")["desktop"], true, "the desktop runs");
    let ports = listening_ports(id);
    let server_port: u16 = api.url.rsplit(':').next().unwrap().parse().unwrap();
    let bridged = inspect(id)["HostConfig"]["NetworkMode"] != "host";
    if !bridged {
        assert!(
            ports.contains(&server_port),
            "{ports:?} lacks the server's {server_port}"
        );
    }
    // Reached from the host: every port on the host's loopback (the same ports with host
    // networking; on a bridge only the published server port is reachable at all).
    for port in ports.iter().copied().chain([server_port]) {
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
            continue;
        };
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut greeting = [0u8; 12];
        let n = s.read(&mut greeting).unwrap_or(0);
        assert!(
            !greeting[..n].starts_with(b"RFB "),
            "port {port} greets with RFB without a key"
        );
    }
}

#[test]
fn no_file_changes_owner_the_agents_files_are_the_folders_owners_and_root_needs_an_opt_in() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let home = p.home.clone();
    const THIRD: u32 = 3456;
    for (owner, name) in [(2345_u32, "person"), (0, "root")] {
        let work = p.dir.path().join(name);
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::fs::write(work.join("theirs.txt"), "someone else's").unwrap();
        std::fs::write(work.join("sub/mine.txt"), "the owner's").unwrap();
        std::os::unix::fs::chown(&work, Some(owner), Some(owner)).unwrap();
        std::os::unix::fs::chown(work.join("sub"), Some(owner), Some(owner)).unwrap();
        std::os::unix::fs::chown(work.join("sub/mine.txt"), Some(owner), Some(owner)).unwrap();
        std::os::unix::fs::chown(work.join("theirs.txt"), Some(THIRD), Some(THIRD)).unwrap();
        let owners = |w: &Path| -> Vec<(String, u32, u32)> {
            ["", "sub", "sub/mine.txt", "theirs.txt"]
                .iter()
                .map(|f| {
                    let m = std::fs::metadata(w.join(f)).unwrap();
                    ((*f).to_owned(), m.uid(), m.gid())
                })
                .collect()
        };
        let before = owners(&work);
        let llm = ScriptedLlmServer::start(
            Script::new([
                Step::tool_call(
                    "terminal",
                    json!({"command": "echo new > by-command.txt && mkdir -p made/deeper && id -u", "security_risk": "LOW"}),
                ),
                Step::tool_call(
                    "file_editor",
                    json!({"command": "create", "path": "/workspace/edited/by-editor.txt", "file_text": "new\n"}),
                ),
                Step::tool_call("finish", json!({"message": "wrote"})),
            ])
            .with_no_tools_text("Owners"),
        );
        if owner == 0 {
            // Refused with the choices, and nothing started or changed.
            let out = start_output(&home, &work, &llm.base_url(), &[]);
            assert_eq!(out.status.code(), Some(1), "{}", text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("owned by root")
                    && err.contains("Choose a folder")
                    && err.contains("--allow-root"),
                "{err}"
            );
            assert!(sandboxes_of(&home, &work).is_empty());
            assert_eq!(owners(&work), before);
        }
        let extra: &[&str] = if owner == 0 { &["--allow-root"] } else { &[] };
        let (sb, guard) = start(&home, &work, &llm.base_url(), extra);
        let api = Api::of(&sb);
        let cid = api.converse(&llm, "write files");
        api.wait_finished(&cid);
        drop(guard);
        assert_eq!(
            owners(&work),
            before,
            "an owner changed in the {name} folder"
        );
        for made in [
            "by-command.txt",
            "made/deeper",
            "edited",
            "edited/by-editor.txt",
        ] {
            let m = std::fs::metadata(work.join(made))
                .unwrap_or_else(|e| panic!("{made}: {e}; {:?}", tool_results(&llm)));
            assert_eq!(
                (m.uid(), m.gid()),
                (owner, owner),
                "{made} in the {name} folder"
            );
        }
        assert!(
            tool_results(&llm)[0].contains(&owner.to_string()),
            "{:?}",
            tool_results(&llm)
        );
    }
}

#[test]
fn conversations_outlive_docker_kill_at_random_moments_and_finish_in_a_new_sandbox() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let rounds: u64 = std::env::var("TANDEM_CHAOS_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    // Random moments, reproducible from the seed printed here.
    let seed = std::env::var("TANDEM_CHAOS_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| u64::from(std::process::id()));
    eprintln!("chaos seed {seed} (TANDEM_CHAOS_SEED), {rounds} rounds");
    let mut rng = seed;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut conversations = Vec::new();
    for round in 0..rounds {
        let llm = ScriptedLlmServer::start(
            Script::new(
                (0..4)
                    .map(|i| {
                        Step::tool_call(
                            "terminal",
                            json!({"command": format!("sleep 0.5; echo round-{round}-step-{i} >> steps.txt"), "security_risk": "LOW"}),
                        )
                    })
                    .chain([Step::tool_call("finish", json!({"message": "done"}))])
                    .collect::<Vec<_>>(),
            )
            .with_no_tools_text("Chaos"),
        );
        let (sb, guard) = start(&home, &work, &llm.base_url(), &[]);
        let id = sb["id"].as_str().unwrap().to_owned();
        let api = Api::of(&sb);
        let cid = api.converse(&llm, &format!("round {round}"));
        // Everything the server returned before the kill was acknowledged.
        let kill_after = Duration::from_millis(next() % 3000);
        let started = Instant::now();
        let mut acknowledged = BTreeSet::new();
        while started.elapsed() < kill_after {
            if let Ok(ids) = api.event_ids(&cid) {
                acknowledged.extend(ids);
            }
        }
        let killed = Command::new("docker").args(["kill", &id]).output().unwrap();
        assert!(
            killed.status.success(),
            "{}",
            String::from_utf8_lossy(&killed.stderr)
        );
        drop(guard);
        eprintln!(
            "round {round}: killed after {kill_after:?} with {} events acknowledged",
            acknowledged.len()
        );

        // A new sandbox on the same workspace lists the conversation with every acknowledged
        // event, and the run finishes there.
        if llm.remaining_steps() == 0 {
            llm.push_step(Step::tool_call("finish", json!({"message": "done"})));
        }
        let (sb, _guard) = start(&home, &work, &llm.base_url(), &[]);
        let api = Api::of(&sb);
        let listed = api.get("/api/conversations/search?limit=100");
        let ids: Vec<&str> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["id"].as_str())
            .collect();
        for c in conversations.iter().chain([&cid]) {
            assert!(ids.contains(&c.as_str()), "{c} not listed: {listed}");
        }
        let after = api.event_ids(&cid).unwrap();
        let lost: Vec<_> = acknowledged.difference(&after).collect();
        assert!(
            lost.is_empty(),
            "round {round}: acknowledged events lost: {lost:?}"
        );
        if api.status(&cid) != "finished" {
            api.post(&format!("/api/conversations/{cid}/run"), json!({}));
            api.wait_finished(&cid);
        }
        conversations.push(cid);
    }
}

#[test]
fn on_a_bridge_a_loopback_llm_is_reached_through_the_host_gateway() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    // The project's daemon has no bridge (--bridge=none): this needs a second one, with a
    // bridge, which scripts/docker-bridge.sh starts (and copies the image to). It skips only
    // where no bridge can run on this machine (that script's status 3).
    let Some(docker_host) = bridge_daemon() else {
        return;
    };
    let docker = |args: &[&str]| {
        let out = Command::new("docker")
            .args(args)
            .env("DOCKER_HOST", &docker_host)
            .output()
            .unwrap();
        assert!(out.status.success(), "docker {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let gateway = docker(&[
        "network",
        "inspect",
        "bridge",
        "-f",
        "{{range .IPAM.Config}}{{.Gateway}}{{end}}",
    ]);
    let gateway: std::net::IpAddr = gateway
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("gateway {gateway:?}: {e}"));
    // The LLM listens on the bridge's gateway (what host.docker.internal maps to); the
    // person gives its loopback URL, which the sandbox cannot reach as such.
    let llm = ScriptedLlmServer::bind(
        std::net::SocketAddr::new(gateway, 0),
        tandem_testkit::Source::Script(
            Script::new([
                Step::tool_call(
                    "terminal",
                    json!({"command": "getent ahostsv4 host.docker.internal", "security_risk": "LOW"}),
                ),
                Step::tool_call("finish", json!({"message": "reached over the bridge"})),
            ])
            .with_no_tools_text("Bridge"),
        ),
    )
    .unwrap();
    let loopback = format!("http://127.0.0.1:{}/v1", llm.addr().port());
    let w = p.work.to_string_lossy().into_owned();
    let out = Command::new(tandem_bin().unwrap())
        .args([
            "run",
            "use the llm",
            "--sandbox",
            "docker",
            "--workspace",
            &w,
            "--model",
            "openai/fake",
            "--base-url",
            &loopback,
            "--api-key",
            "x",
        ])
        .env("TANDEM_HOME", &p.home)
        .env("DOCKER_HOST", &docker_host)
        .env("TANDEM_SANDBOX_NETWORK", "bridge")
        .env_remove("LLM_MODEL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "reaches the LLM at {loopback} as http://host.docker.internal:{}/v1",
            llm.addr().port()
        )),
        "the rewrite is printed: {err}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("reached over the bridge"),
        "{}",
        text(&out)
    );
    let results = tool_results(&llm);
    assert!(results[0].contains(&gateway.to_string()), "{results:?}");
}

/// The daemon with a bridge network: `TANDEM_BRIDGE_DOCKER_HOST`, else the one
/// scripts/docker-bridge.sh starts; none (the test skips, saying why) only where no bridge can
/// run here.
fn bridge_daemon() -> Option<String> {
    if let Some(h) = std::env::var("TANDEM_BRIDGE_DOCKER_HOST")
        .ok()
        .filter(|h| !h.is_empty())
    {
        return Some(h);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/docker-bridge.sh");
    let out = Command::new("bash").arg(&script).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let host = stdout
                .lines()
                .find_map(|l| l.strip_prefix("export TANDEM_BRIDGE_DOCKER_HOST="))
                .unwrap_or_else(|| panic!("{script:?} named no daemon: {stdout}\n{err}"));
            Some(host.trim().to_owned())
        }
        Some(3) => {
            eprintln!("skipped: no bridge network can run on this machine: {err}");
            None
        }
        _ => panic!("{script:?} failed: {err}"),
    }
}
