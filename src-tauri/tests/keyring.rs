//! The keyring against a real Secret Service (gnome-keyring inside its own D-Bus session), and
//! the 0600 file fallback when no D-Bus session exists. Each case re-runs this test binary in
//! the environment it needs (the keyring crate picks its store once per process) and runs one
//! `#[ignore]`d inner test there.
//!
//! The login keyring is created with a non-empty password: given an empty one, gnome-keyring
//! 42 asks a (headless, so never answered) prompter instead.

use std::path::Path;
use std::process::Command;

use tandem_desktop::keystore::{Backend, KeyStore};

/// Runs the ignored test `name` of this module through `wrapper` with `env`.
fn run_inner(name: &str, wrapper: &[&str], env: &[(&str, &str)], remove: &[&str]) {
    crate::inner::run_inner(module_path!(), name, wrapper, env, remove);
}

fn need(program: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{program}` is missing: run scripts/setup.sh (it installs the desktop test packages)"
    );
}

#[test]
fn secret_service_round_trip() {
    need("dbus-run-session");
    need("gnome-keyring-daemon");
    need("secret-tool");
    need("dbus-send");
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    // Wait until the unlocked daemon owns the Secret Service name: a request before that
    // makes D-Bus activate a second daemon that races the first over the keyring file.
    let script = r#"printf tandem-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null
for _ in $(seq 100); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" && break
  sleep 0.05
done
exec "$@""#;
    run_inner(
        "inner_secret_service",
        &["dbus-run-session", "--", "bash", "-c", script, "bash"],
        &[
            ("HOME", h),
            ("XDG_DATA_HOME", &format!("{h}/data")),
            ("XDG_CONFIG_HOME", &format!("{h}/config")),
        ],
        &["DISPLAY"],
    );
}

#[test]
#[ignore = "run inside a D-Bus session with gnome-keyring by secret_service_round_trip"]
fn inner_secret_service() {
    let config = tempfile::tempdir().unwrap();
    let ks = KeyStore::detect(config.path());
    let st = ks.status();
    assert_eq!(
        (st.backend, st.warning.as_deref()),
        (Backend::Os, None),
        "{st:?}"
    );
    let account = format!("test-{}", std::process::id());
    assert_eq!(ks.get("tandem-test", &account).unwrap(), None);
    ks.set("tandem-test", &account, "sk-round-trip").unwrap();
    assert_eq!(
        ks.get("tandem-test", &account).unwrap().as_deref(),
        Some("sk-round-trip")
    );
    // It really is in the Secret Service, where other programs find it.
    let out = Command::new("secret-tool")
        .args(["lookup", "service", "tandem-test", "username", &account])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sk-round-trip");
    ks.set("tandem-test", &account, "sk-replaced").unwrap();
    assert_eq!(
        ks.get("tandem-test", &account).unwrap().as_deref(),
        Some("sk-replaced")
    );
    ks.delete("tandem-test", &account).unwrap();
    ks.delete("tandem-test", &account).unwrap();
    assert_eq!(ks.get("tandem-test", &account).unwrap(), None);
    // Nothing was written to the fallback file.
    assert!(!config.path().join("secrets.json").exists());
}

#[test]
fn falls_back_to_a_private_file_without_dbus() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    run_inner(
        "inner_no_dbus",
        &["env"],
        &[
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/tandem-test-bus",
            ),
            ("XDG_RUNTIME_DIR", h),
            ("HOME", h),
        ],
        &["DISPLAY", "WAYLAND_DISPLAY"],
    );
}

#[test]
#[ignore = "run without a D-Bus session by falls_back_to_a_private_file_without_dbus"]
fn inner_no_dbus() {
    let config = tempfile::tempdir().unwrap();
    let ks = KeyStore::detect(config.path());
    let st = ks.status();
    assert_eq!(st.backend, Backend::File, "{st:?}");
    assert!(st.cause.as_deref().is_some_and(|c| !c.is_empty()), "{st:?}");
    let warning = st.warning.expect("a visible warning");
    assert!(warning.contains("No system keyring"), "{warning}");
    ks.set("tandem", "llm:openai", "sk-file").unwrap();
    assert_eq!(
        ks.get("tandem", "llm:openai").unwrap().as_deref(),
        Some("sk-file")
    );
    let file = config.path().join("secrets.json");
    assert_eq!(st.file.as_deref(), Some(file.as_path()));
    // The warning the desktop shows names the file the secrets went to.
    assert!(warning.contains(&file.display().to_string()), "{warning}");
    assert_mode(&file, 0o600);
    ks.delete("tandem", "llm:openai").unwrap();
    assert_eq!(ks.get("tandem", "llm:openai").unwrap(), None);
}

trait ModeExt {
    fn permissions_mode(&self) -> u32;
}

impl ModeExt for std::fs::Metadata {
    fn permissions_mode(&self) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        self.permissions().mode() & 0o777
    }
}

fn assert_mode(path: &Path, mode: u32) {
    assert_eq!(
        std::fs::metadata(path).unwrap().permissions_mode(),
        mode,
        "{}",
        path.display()
    );
}
