//! The system store (a sandbox's folders outside the workspace) with real git and real bash:
//! an install's files and a user-site package are named on the action as restorable, a rewind
//! takes them back and its undo returns them, a changed file of the image's `/usr` (never
//! copied) is named as not restorable, and the baseline keeps no copy of `/usr`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tandem_checkpoint::{RecordLog, RewindTarget, Store, rewind};

#[path = "support/shell.rs"]
mod shell;
use shell::bash;
use tandem_protocol::api::{CheckpointAuthor, PathChange, PathChangeKind, RewindFiles};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

#[test]
fn an_install_outside_the_workspace_is_named_rewound_and_the_rewind_undone() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let sys = |p: &str| root.join(p);
    // The "image": a /usr with a program, an /etc, dpkg's status and a home.
    bash(
        &root,
        "mkdir -p usr/bin usr/share/doc etc opt var/lib/dpkg home/tandem ws \
         && printf 'old tool\\n' > usr/bin/tool && printf 'doc\\n' > usr/share/doc/README \
         && printf 'a=1\\n' > etc/app.conf && printf 'secret\\n' > etc/private && chmod 600 etc/private \
         && printf 'Package: base\\n' > var/lib/dpkg/status && printf 'alias l=ls\\n' > home/tandem/.bashrc \
         && mkdir -p home/tandem/.cache && echo c > home/tandem/.cache/x \
         && find usr etc var home -exec touch -h -d 2020-01-01 {} +",
    );
    let roots: Vec<PathBuf> = ["usr", "etc", "opt", "var/lib/dpkg", "home"]
        .iter()
        .map(|r| sys(r))
        .collect();
    let home = tempfile::tempdir().unwrap();
    let system = Store::open_system(home.path(), &roots).unwrap();
    let ws = sys("ws");
    let store = Store::open(home.path(), &ws).unwrap();
    store.watch_system(system.clone());

    // The baseline names /usr's files without a copy, and keeps /etc's.
    let has = |path: &Path| {
        let out = std::process::Command::new("git")
            .args(["hash-object", "--"])
            .arg(path)
            .output()
            .unwrap();
        let id = String::from_utf8(out.stdout).unwrap();
        std::process::Command::new("git")
            .env("GIT_DIR", system.dir().join("git"))
            .args(["cat-file", "-e", id.trim()])
            .status()
            .unwrap()
            .success()
    };
    assert!(!has(&sys("usr/bin/tool")), "the image's /usr is not copied");
    assert!(has(&sys("etc/app.conf")), "/etc is kept");

    let conversation = tempfile::tempdir().unwrap();
    let log = RecordLog::new(conversation.path());
    let mut events = Vec::new();
    let act = |script: &str, events: &mut Vec<String>| {
        let action = format!("event-{}", events.len());
        events.push(action.clone());
        let before = store.take("before").unwrap();
        log.append(&before, &action, CheckpointAuthor::Person, None)
            .unwrap();
        bash(&root, script);
        let observation = format!("event-{}", events.len());
        events.push(observation.clone());
        let after = store.take_after(&before, "after").unwrap();
        log.append(
            &after,
            &observation,
            CheckpointAuthor::Agent,
            Some("terminal".into()),
        )
        .unwrap()
    };
    // An "install": a new program, dpkg's status, a config, a user-site package, a cache.
    let install = act(
        "printf 'hello\\n' > usr/bin/hello && chmod 755 usr/bin/hello \
         && printf 'Package: base\\nPackage: hello\\n' > var/lib/dpkg/status \
         && printf 'a=2\\n' > etc/app.conf && printf 'changed\\n' > etc/private \
         && mkdir -p home/tandem/.local/lib/pkg && echo 'x = 1' > home/tandem/.local/lib/pkg/__init__.py \
         && echo d > home/tandem/.cache/y && echo ws > ws/file.txt && mkdir -p opt/tool && echo t > opt/tool/bin",
        &mut events,
    );
    let named = |p: &str, kind: PathChangeKind| {
        install
            .outside
            .iter()
            .any(|o| o.path == sys(p).to_string_lossy() && o.change == kind && o.restorable)
    };
    assert!(
        named("usr/bin/hello", PathChangeKind::Added),
        "{:?}",
        install.outside
    );
    assert!(
        named("var/lib/dpkg/status", PathChangeKind::Modified),
        "{:?}",
        install.outside
    );
    assert!(
        named(
            "home/tandem/.local/lib/pkg/__init__.py",
            PathChangeKind::Added
        ),
        "{:?}",
        install.outside
    );
    assert!(
        !install.outside.iter().any(|o| o.path.contains(".cache")),
        "caches are not checkpointed: {:?}",
        install.outside
    );
    assert!(install.system.is_some());
    // A second action changes a file of the image's /usr: it was never copied.
    act("printf 'new tool\\n' > usr/bin/tool", &mut events);

    let private_mode = std::fs::metadata(sys("etc/private")).unwrap().mode() & 0o777;
    let answer = rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Event(events[0].clone()),
        RewindFiles::Agent,
        false,
    )
    .unwrap();
    let restored = |p: &str| {
        answer
            .restored
            .iter()
            .find(|r| r.path == sys(p).to_string_lossy())
            .map(|r| r.change)
    };
    assert_eq!(
        restored("usr/bin/hello"),
        Some(PathChange::Delete),
        "{answer:?}"
    );
    assert_eq!(
        restored("var/lib/dpkg/status"),
        Some(PathChange::Write),
        "{answer:?}"
    );
    let tool = answer
        .skipped
        .iter()
        .find(|s| s.path == sys("usr/bin/tool").to_string_lossy())
        .unwrap_or_else(|| panic!("{answer:?}"));
    assert!(tool.reason.contains("not restorable"), "{tool:?}");
    assert!(!sys("usr/bin/hello").exists());
    assert!(
        !sys("home/tandem/.local/lib/pkg").exists(),
        "emptied folders go too"
    );
    assert!(!sys("opt/tool").exists());
    assert!(sys("opt").is_dir(), "a root stays, emptied or not");
    assert_eq!(read(&sys("var/lib/dpkg/status")), "Package: base\n");
    assert_eq!(read(&sys("etc/app.conf")), "a=1\n");
    assert_eq!(read(&sys("etc/private")), "secret\n");
    assert_eq!(
        std::fs::metadata(sys("etc/private"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        private_mode,
        "a restored file keeps its permissions"
    );
    assert!(!ws.join("file.txt").exists());
    assert_eq!(read(&sys("usr/bin/tool")), "new tool\n", "left as it is");
    assert!(
        sys("home/tandem/.cache/y").exists(),
        "caches are left alone"
    );

    // Undo: the install is back.
    let undo = answer.undo_checkpoint_id.clone().unwrap();
    let again = rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Checkpoint(undo),
        RewindFiles::All,
        false,
    )
    .unwrap();
    assert!(!again.restored.is_empty(), "{again:?}");
    assert_eq!(read(&sys("usr/bin/hello")), "hello\n");
    assert_ne!(
        std::fs::metadata(sys("usr/bin/hello")).unwrap().mode() & 0o111,
        0
    );
    assert_eq!(
        read(&sys("var/lib/dpkg/status")),
        "Package: base\nPackage: hello\n"
    );
    assert_eq!(
        read(&sys("home/tandem/.local/lib/pkg/__init__.py")),
        "x = 1\n"
    );
    assert_eq!(read(&ws.join("file.txt")), "ws\n");
}

#[test]
fn a_root_that_is_slash_or_relative_is_refused_by_name() {
    let home = tempfile::tempdir().unwrap();
    for bad in ["/", "relative/usr"] {
        let e = Store::open_system(home.path(), &[PathBuf::from(bad)]).unwrap_err();
        assert!(e.to_string().contains(bad.trim_end_matches('/')), "{e}");
        assert!(e.to_string().contains("TANDEM_SYSTEM_CHECKPOINTS"), "{e}");
    }
}

#[test]
fn a_lost_system_store_leaves_the_workspace_rewind_to_go_ahead_and_says_so() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    bash(
        &root,
        "mkdir -p etc ws && echo a > etc/conf && echo one > ws/f",
    );
    let home = tempfile::tempdir().unwrap();
    let system = Store::open_system(home.path(), &[root.join("etc")]).unwrap();
    let store = Store::open(home.path(), &root.join("ws")).unwrap();
    store.watch_system(system.clone());
    let conversation = tempfile::tempdir().unwrap();
    let log = RecordLog::new(conversation.path());
    let before = store.take("before").unwrap();
    log.append(&before, "e0", CheckpointAuthor::Person, None)
        .unwrap();
    bash(&root, "echo b > etc/conf && echo two > ws/f");
    let after = store.take_after(&before, "after").unwrap();
    log.append(
        &after,
        "e1",
        CheckpointAuthor::Agent,
        Some("terminal".into()),
    )
    .unwrap();
    std::fs::remove_dir_all(system.dir().join("git")).unwrap();

    let events = ["e0".to_owned(), "e1".to_owned()];
    let answer = rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Event("e0".into()),
        RewindFiles::Agent,
        false,
    )
    .unwrap();
    assert_eq!(read(&root.join("ws/f")), "one\n", "{answer:?}");
    let named = answer
        .skipped
        .iter()
        .find(|s| s.path == "/")
        .unwrap_or_else(|| panic!("{answer:?}"));
    assert!(
        named.reason.contains("outside the workspace: not restored"),
        "{named:?}"
    );
    assert_eq!(read(&root.join("etc/conf")), "b\n", "left as it is");
}
