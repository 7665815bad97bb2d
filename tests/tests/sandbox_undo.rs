//! Undo outside the workspace in the Docker sandbox: the agent (root in the container, as with
//! `--allow-root`, its home `/root`) installs a Debian package with `apt-get install ./pkg.deb` and a Python
//! package with `pip install --user`, both offline; each is listed on its action as a
//! restorable outside change; a rewind to before them removes both (the program, dpkg's record,
//! the user-site package) and undoing the rewind brings them back.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::api;
use tandem_testkit::{Script, ScriptedLlmServer, Step};

use crate::sandbox::{Detached, Place, text, tool_results};
use crate::tandem;

/// A Debian package `tandem-hello` (a script in /usr/bin) built with dpkg-deb into `dir`.
fn build_deb(dir: &Path) {
    let root = dir.join("deb-root");
    std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::write(
        root.join("DEBIAN/control"),
        "Package: tandem-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: Tandem <tests@tandem.invalid>\nDescription: a package the sandbox's undo test installs\n",
    )
    .unwrap();
    let bin = root.join("usr/bin/tandem-hello");
    std::fs::write(&bin, "#!/bin/sh\necho hello from the package\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("dpkg-deb")
        .args(["--build", "--root-owner-group"])
        .arg(&root)
        .arg(dir.join("tandem-hello.deb"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::remove_dir_all(&root).unwrap();
}

/// A Python project `tandem-pyhello` that pip builds offline with the image's setuptools.
fn write_python_project(dir: &Path) {
    let project = dir.join("pyhello");
    std::fs::create_dir_all(project.join("tandem_pyhello")).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"tandem-pyhello\"\nversion = \"1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        project.join("tandem_pyhello/__init__.py"),
        "GREETING = 'hello from pip'\n",
    )
    .unwrap();
}

/// `sh -c SCRIPT` as root in the container, with the agent's home (where `pip install --user`
/// installs): its exit code and output.
fn exec(container: &str, script: &str) -> (Option<i32>, String) {
    let out = Command::new("docker")
        .args(["exec", "-e", "HOME=/root", container, "sh", "-c", script])
        .output()
        .unwrap();
    (out.status.code(), text(&out))
}

const INSTALLED: &str = "tandem-hello && dpkg -s tandem-hello >/dev/null && python3 -c 'import tandem_pyhello; print(tandem_pyhello.GREETING)'";
const REMOVED: &str = "! test -e /usr/bin/tandem-hello && ! dpkg -s tandem-hello 2>/dev/null && ! python3 -c 'import tandem_pyhello' 2>/dev/null";

#[tokio::test(flavor = "multi_thread")]
async fn an_apt_and_a_pip_install_in_the_sandbox_are_listed_rewound_and_the_rewind_undone() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    // A root-owned workspace: the agent runs as root in the container, where apt-get works.
    std::os::unix::fs::chown(&work, Some(0), Some(0)).unwrap();
    build_deb(&work);
    write_python_project(&work);

    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call(
                "terminal",
                json!({"command": "apt-get install -y ./tandem-hello.deb && tandem-hello", "security_risk": "LOW"}),
            ),
            Step::tool_call(
                "terminal",
                json!({"command": "pip install --user --break-system-packages --no-index --no-build-isolation ./pyhello && python3 -c 'import tandem_pyhello'", "security_risk": "LOW"}),
            ),
            Step::tool_call("finish", json!({"message": "installed"})),
        ])
        .with_no_tools_text("Installs"),
    );

    let (h, w) = (home.clone(), work.to_string_lossy().into_owned());
    let out = tokio::task::spawn_blocking(move || {
        tandem(
            &h,
            &[
                "sandbox",
                "start",
                "--workspace",
                &w,
                "--allow-root",
                "--memory",
                "2g",
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sb: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (url, key, container) = (
        sb["url"].as_str().unwrap().to_owned(),
        sb["session_key"].as_str().unwrap().to_owned(),
        sb["id"].as_str().unwrap().to_owned(),
    );
    let _removed = Detached {
        home: home.clone(),
        id: container.clone(),
    };
    let http = reqwest::Client::new();
    let agent = json!({
        "llm": {"model": "openai/scripted", "api_key": "sk-x", "base_url": llm.base_url(), "num_retries": 0},
        "tools": [{"name": "terminal"}],
    });
    let (s, info) = api(
        &http,
        reqwest::Method::POST,
        &format!("{url}/api/conversations"),
        &key,
        Some(json!({"agent": agent, "workspace": {"working_dir": "/workspace"}})),
    )
    .await;
    assert_eq!(s, 201, "{info}");
    let id = info["id"].as_str().unwrap().to_owned();
    let (s, b) = api(
        &http,
        reqwest::Method::POST,
        &format!("{url}/api/conversations/{id}/events"),
        &key,
        Some(
            json!({"role": "user", "content": [{"type": "text", "text": "install"}], "run": true}),
        ),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let start = Instant::now();
    loop {
        let (_, info) = api(
            &http,
            reqwest::Method::GET,
            &format!("{url}/api/conversations/{id}"),
            &key,
            None,
        )
        .await;
        if info["execution_status"] == "finished" {
            break;
        }
        assert!(
            !matches!(info["execution_status"].as_str(), Some("error" | "stuck")),
            "{info}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "the agent never finished: {info}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (code, said) = exec(&container, INSTALLED);
    assert_eq!(
        code,
        Some(0),
        "both installs worked: {said}\n{:?}",
        tool_results(&llm)
    );

    // Each install is named on its action, as restorable.
    let (_, list) = api(
        &http,
        reqwest::Method::GET,
        &format!("{url}/api/conversations/{id}/checkpoints"),
        &key,
        None,
    )
    .await;
    let agent: Vec<&Value> = list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["author"] == "agent")
        .collect();
    assert_eq!(agent.len(), 2, "{list}");
    let outside = |c: &Value| -> Vec<(String, bool)> {
        c["outside"]
            .as_array()
            .map(|o| {
                o.iter()
                    .map(|o| {
                        (
                            o["path"].as_str().unwrap().to_owned(),
                            o["restorable"] == true,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let apt = outside(agent[0]);
    assert!(
        apt.contains(&("/usr/bin/tandem-hello".to_owned(), true)),
        "{apt:?}"
    );
    assert!(
        apt.iter().any(|(p, r)| p == "/var/lib/dpkg/status" && *r),
        "{apt:?}"
    );
    let pip = outside(agent[1]);
    assert!(
        pip.iter()
            .any(|(p, r)| p.starts_with("/root/.local/lib/python3")
                && p.contains("tandem_pyhello")
                && *r),
        "{pip:?}"
    );

    // Rewind to the first action (recorded before it ran).
    let (_, events) = api(
        &http,
        reqwest::Method::GET,
        &format!("{url}/api/conversations/{id}/events/search?limit=100"),
        &key,
        None,
    )
    .await;
    let first_action = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "ActionEvent")
        .and_then(|e| e["id"].as_str())
        .unwrap_or_else(|| panic!("{events}"))
        .to_owned();
    let (s, r) = api(
        &http,
        reqwest::Method::POST,
        &format!("{url}/api/conversations/{id}/rewind"),
        &key,
        Some(json!({"event_id": first_action})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let restored: Vec<&str> = r["restored"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["path"].as_str())
        .collect();
    assert!(restored.contains(&"/usr/bin/tandem-hello"), "{r}");
    assert!(restored.contains(&"/var/lib/dpkg/status"), "{r}");
    let (code, said) = exec(&container, REMOVED);
    assert_eq!(
        code,
        Some(0),
        "the rewind removed both installs: {said}\n{r}"
    );

    // Undo the rewind: both are back.
    let undo = r["undo_checkpoint_id"].as_str().unwrap().to_owned();
    let (s, r) = api(
        &http,
        reqwest::Method::POST,
        &format!("{url}/api/conversations/{id}/rewind"),
        &key,
        Some(json!({"checkpoint_id": undo, "files": "all"})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let (code, said) = exec(&container, INSTALLED);
    assert_eq!(
        code,
        Some(0),
        "undoing the rewind brought both back: {said}\n{r}"
    );
}
