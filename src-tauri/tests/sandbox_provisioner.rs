//! The desktop's sandbox backend knows no provisioner type: what starts its sandboxes is a
//! [`ProvisionerSource`]. Given the in-memory fake instead of Docker (as a Kubernetes
//! provisioner would be given), the same backend builds a missing image, starts a sandbox,
//! publishes it as connected with its key in the keyring, reports its death with the reason,
//! and removes it on stop — with no change to the backend, the CLI or the UI.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tandem_desktop::keystore::KeyStore;
use tandem_desktop::sandbox_backend::{
    FailureCode, KEY_ACCOUNT, SandboxBackend, SandboxConfig, SandboxState, SandboxStatus,
};
use tandem_sandbox::fake::Fake;

type Heard = Arc<Mutex<Vec<SandboxStatus>>>;

fn backend(dir: &std::path::Path, fake: &Arc<Fake>) -> (SandboxBackend, Heard, Arc<KeyStore>) {
    let keys = Arc::new(KeyStore::file(dir, "test"));
    let mut config = SandboxConfig::new(Vec::new(), Some("openai/gpt-4o".into()));
    config.provisioner = fake.source();
    config.conversations_home = Some(dir.join("tandem-home"));
    // The image is built from a tandem binary: any file stands in for it with the fake.
    let binary = dir.join("tandem");
    std::fs::write(&binary, b"#!/bin/sh\n").unwrap();
    config.binary.env = Some(binary.into_os_string());
    let heard: Heard = Arc::default();
    let h = Arc::clone(&heard);
    let b = SandboxBackend::new(Arc::clone(&keys), config, move |s| {
        h.lock().unwrap().push(s.clone())
    });
    (b, heard, keys)
}

async fn until(b: &SandboxBackend, what: &str, f: impl Fn(&SandboxState) -> bool) -> SandboxState {
    let t = Instant::now();
    loop {
        let s = b.status().state;
        if f(&s) {
            return s;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "never {what}: {s:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn any_provisioner_plugs_into_the_desktop_backend_shown_with_the_fake() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("project");
    std::fs::create_dir(&workspace).unwrap();
    let fake = Fake::new();
    fake.without_image();
    let (b, heard, keys) = backend(dir.path(), &fake);

    // The image is missing: the backend builds it through the provisioner, then starts.
    b.start(workspace.to_string_lossy().into_owned()).await;
    let connected = until(&b, "connected", |s| {
        matches!(s, SandboxState::Connected { .. })
    })
    .await;
    let SandboxState::Connected {
        base_url,
        id,
        key_account,
        workspace_inside,
        ..
    } = connected
    else {
        unreachable!()
    };
    assert_eq!(fake.builds(), 1, "the missing image was built once");
    assert!(
        heard
            .lock()
            .unwrap()
            .iter()
            .any(|s| matches!(s.state, SandboxState::Building { .. })),
        "the build was shown"
    );
    assert_eq!(base_url, format!("http://fake.invalid/{id}"));
    assert_eq!(workspace_inside, tandem_sandbox::WORKSPACE_IN_SANDBOX);
    assert_eq!(key_account, KEY_ACCOUNT);
    assert_eq!(
        keys.get("tandem", KEY_ACCOUNT).unwrap().as_deref(),
        Some(format!("key-of-{id}").as_str()),
        "the sandbox's key is in the keyring"
    );
    assert_eq!(fake.sandboxes(), vec![id.clone()]);

    // It dies: the backend says so with the reason, removes it and forgets its key.
    fake.kill(&id, 137);
    let failed = until(&b, "failed", |s| matches!(s, SandboxState::Failed { .. })).await;
    let SandboxState::Failed { reason, code, .. } = failed else {
        unreachable!()
    };
    assert_eq!(code, FailureCode::Died);
    assert!(reason.contains("exited with code 137"), "{reason}");
    assert!(fake.sandboxes().is_empty(), "the dead sandbox was removed");
    assert_eq!(keys.get("tandem", KEY_ACCOUNT).unwrap(), None);

    // Started again (the image is there now) and stopped: nothing is left.
    b.start(workspace.to_string_lossy().into_owned()).await;
    until(&b, "connected again", |s| {
        matches!(s, SandboxState::Connected { .. })
    })
    .await;
    assert_eq!(fake.builds(), 1, "no second build");
    assert_eq!(fake.sandboxes().len(), 1);
    let stopped = b.stop().await;
    assert!(
        matches!(stopped.state, SandboxState::Stopped { .. }),
        "{stopped:?}"
    );
    assert!(fake.sandboxes().is_empty(), "stop removed the sandbox");
    assert_eq!(keys.get("tandem", KEY_ACCOUNT).unwrap(), None);
}
