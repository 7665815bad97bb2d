//! Re-running one `#[ignore]`d test of this binary in another environment: for what a running
//! test process cannot change safely (variables read once per process, such as the keyring's
//! store or `DOCKER_HOST`).

use std::process::Command;

/// Runs the ignored test `name` of `module` (the caller's `module_path!()`) through `wrapper`
/// (a command line whose last arguments become the test invocation; empty: none) with `env`
/// set and `remove` unset, and fails unless it passed.
pub fn run_inner(
    module: &str,
    name: &str,
    wrapper: &[&str],
    env: &[(&str, &str)],
    remove: &[&str],
) {
    let exe = std::env::current_exe().unwrap();
    // Tests are named by their path inside the test binary (`keyring::inner_…`).
    let name = format!("{}::{name}", module.split_once("::").map_or("", |(_, m)| m));
    let mut cmd = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args([
        name.as_str(),
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for k in remove {
        cmd.env_remove(k);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {wrapper:?} {exe:?}: {e}"));
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "inner test {name} failed ({}):\n{text}",
        out.status
    );
}
