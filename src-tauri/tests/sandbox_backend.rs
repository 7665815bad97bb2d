//! The Docker sandbox backend as the desktop drives it: without a daemon it fails at once with
//! the cause and the fix; with one (`DOCKER_HOST`) and the image, it starts a sandbox whose
//! server takes the key kept in the keyring and the webview's origin, notices when the container
//! dies, and leaves no container behind after stop, a cancelled start or quitting.
//!
//! The real-Docker test skips without a daemon or without `tandem-sandbox:latest` (it never
//! builds: that needs the network), unless `TANDEM_REQUIRE_DOCKER=1`, which makes it fail.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tandem_desktop::keystore::KeyStore;
use tandem_desktop::sandbox_backend::{
    BinarySearch, FailureCode, KEY_ACCOUNT, SandboxBackend, SandboxConfig, SandboxState,
    SandboxStatus, StartStep, sandbox_env,
};

type Heard = Arc<Mutex<Vec<SandboxStatus>>>;

fn backend(config_dir: &Path) -> (SandboxBackend, Heard, Arc<KeyStore>) {
    let keys = Arc::new(KeyStore::file(config_dir, "test"));
    let mut config = SandboxConfig::new(sandbox_env(None, |_| None, &["tauri://localhost"]), None);
    // Nowhere to find a binary: these tests never build the image.
    config.binary = BinarySearch::default();
    config.image = image();
    // The sandbox's conversations under the test's folder, not the person's $TANDEM_HOME.
    config.conversations_home = Some(config_dir.join("tandem-home"));
    let heard: Heard = Arc::default();
    let h = Arc::clone(&heard);
    let b = SandboxBackend::new(Arc::clone(&keys), config, move |s| {
        h.lock().unwrap().push(s.clone())
    });
    (b, heard, keys)
}

/// The image the real-Docker test starts: `TANDEM_SANDBOX_IMAGE` (a tag of one's own), else
/// the default.
fn image() -> String {
    std::env::var("TANDEM_SANDBOX_IMAGE")
        .ok()
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| tandem_sandbox::IMAGE.to_owned())
}

/// Waits (up to `limit`) until the state is no longer building or starting.
async fn settled(b: &SandboxBackend, limit: Duration) -> SandboxState {
    let t = Instant::now();
    loop {
        let s = b.status().state;
        if !matches!(
            s,
            SandboxState::Starting { .. } | SandboxState::Building { .. }
        ) {
            return s;
        }
        assert!(t.elapsed() < limit, "still {s:?} after {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Re-runs the ignored test `name` of this binary with `DOCKER_HOST` set to `host` (bollard
/// reads it, and the environment cannot be changed safely inside a running test process).
fn run_inner(name: &str, host: &str) {
    crate::inner::run_inner(module_path!(), name, &[], &[("DOCKER_HOST", host)], &[]);
}

#[test]
fn without_a_docker_daemon_the_start_fails_naming_the_cause_and_the_fix() {
    run_inner(
        "inner_no_docker_daemon",
        "unix:///nonexistent/tandem-docker.sock",
    );
}

#[tokio::test]
#[ignore = "run with DOCKER_HOST pointing nowhere by without_a_docker_daemon_…"]
async fn inner_no_docker_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let (b, heard, _) = backend(dir.path());
    let ws = ws.display().to_string();
    b.start(ws.clone()).await;
    let end = settled(&b, Duration::from_secs(30)).await;
    let SandboxState::Failed { reason, code, .. } = &end else {
        panic!("{end:?}")
    };
    assert_eq!(*code, FailureCode::NoDocker);
    for needed in [
        "no Docker daemon answers at unix:///nonexistent/tandem-docker.sock",
        "DOCKER_HOST",
        "dockerd",
    ] {
        assert!(reason.contains(needed), "{needed:?} missing in: {reason}");
    }
    let states: Vec<SandboxState> = heard
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.state.clone())
        .collect();
    assert_eq!(
        states,
        [
            SandboxState::Starting {
                workspace: ws.clone(),
                step: StartStep::Connecting
            },
            end.clone()
        ]
    );
    // Another try is possible and fails the same way; stopping ends at `stopped`.
    b.start(ws.clone()).await;
    assert_eq!(settled(&b, Duration::from_secs(30)).await, end);
    assert_eq!(
        b.stop().await.state,
        SandboxState::Stopped {
            workspace: Some(ws)
        }
    );
}

// --- with a real daemon ---

fn docker(args: &[&str]) -> Option<String> {
    let out = Command::new("docker").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Whether the real-Docker test can run here; without, it skips (or fails when required).
fn docker_ready() -> bool {
    let required = std::env::var("TANDEM_REQUIRE_DOCKER").as_deref() == Ok("1");
    let why = if docker(&["version", "--format", "{{.Server.Version}}"]).is_none() {
        "no Docker daemon answers at DOCKER_HOST (run `bash scripts/docker.sh`)"
    } else if docker(&["image", "inspect", &image()]).is_none() {
        "the sandbox image is missing (run `tandem sandbox build`)"
    } else {
        return true;
    };
    assert!(!required, "TANDEM_REQUIRE_DOCKER=1 but {why}");
    eprintln!("skipped: {why}");
    false
}

/// Containers whose workspace label is `ws` (started from there, any state).
fn containers_of(ws: &Path) -> String {
    let ws = ws.canonicalize().unwrap();
    docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=dev.tandem.sandbox.workspace={}", ws.display()),
    ])
    .unwrap_or_default()
}

async fn connected(b: &SandboxBackend) -> (String, String) {
    match settled(b, Duration::from_secs(180)).await {
        SandboxState::Connected { base_url, id, .. } => (base_url, id),
        other => panic!("not connected: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_sandbox_connects_with_its_key_in_the_keyring_and_leaves_nothing_behind() {
    if !docker_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // A person's folder (a root-owned one is refused without the opt-in).
    if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&ws).unwrap()) == 0 {
        std::os::unix::fs::chown(&ws, Some(1000), Some(1000)).unwrap();
    }
    let wss = ws.display().to_string();
    let (b, heard, keys) = backend(dir.path());

    // Start: the steps in order, then connected.
    b.start(wss.clone()).await;
    let (url, id) = connected(&b).await;
    let steps: Vec<SandboxState> = heard
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.state.clone())
        .collect();
    let starting = |step| SandboxState::Starting {
        workspace: wss.clone(),
        step,
    };
    assert_eq!(
        steps[..3],
        [
            starting(StartStep::Connecting),
            starting(StartStep::Creating),
            starting(StartStep::WaitingForHealth)
        ]
    );
    let seqs: Vec<u32> = heard.lock().unwrap().iter().map(|s| s.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    // The key is in the keyring, and the server takes it and the webview's origin.
    let key = keys.get("tandem", KEY_ACCOUNT).unwrap().expect("key kept");
    let c = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let search = format!("{url}/api/conversations/search");
    assert_eq!(c.get(&search).send().await.unwrap().status(), 401);
    let r = c
        .get(&search)
        .header("X-Session-API-Key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let pre = c
        .request(reqwest::Method::OPTIONS, &search)
        .header("Origin", "tauri://localhost")
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "x-session-api-key")
        .send()
        .await
        .unwrap();
    assert_eq!(
        pre.headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap()),
        Some("tauri://localhost")
    );

    // Stop: the container and the key are gone.
    let s = b.stop().await;
    assert_eq!(
        s.state,
        SandboxState::Stopped {
            workspace: Some(wss.clone())
        }
    );
    assert_eq!(containers_of(&ws), "", "container {id} left behind");
    assert_eq!(keys.get("tandem", KEY_ACCOUNT).unwrap(), None);

    // A container that dies under it reads as failed, with the reason; nothing is left.
    b.start(wss.clone()).await;
    let (_, id) = connected(&b).await;
    docker(&["rm", "-f", &id]).expect("docker rm -f");
    let t = Instant::now();
    let (reason, code) = loop {
        if let SandboxState::Failed { reason, code, .. } = b.status().state {
            break (reason, code);
        }
        assert!(t.elapsed() < Duration::from_secs(60), "{:?}", b.status());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(code, FailureCode::Died);
    assert!(
        reason.contains("removed outside Tandem") || reason.contains("stopped"),
        "{reason}"
    );
    assert_eq!(keys.get("tandem", KEY_ACCOUNT).unwrap(), None);

    // A start cancelled while the container comes up leaves none behind.
    b.start(wss.clone()).await;
    let t = Instant::now();
    while !matches!(
        b.status().state,
        SandboxState::Starting {
            step: StartStep::Creating | StartStep::WaitingForHealth,
            ..
        } | SandboxState::Connected { .. }
    ) {
        assert!(t.elapsed() < Duration::from_secs(60), "{:?}", b.status());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    b.stop().await;
    assert_eq!(containers_of(&ws), "");

    // Quitting removes a running sandbox.
    b.start(wss.clone()).await;
    connected(&b).await;
    b.shutdown(Duration::from_secs(20)).await;
    assert_eq!(containers_of(&ws), "");
    assert!(matches!(b.status().state, SandboxState::Stopped { .. }));
}
