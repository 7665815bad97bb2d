//! The `glob` and `grep` tools on real directory trees: what they skip (`.gitignore`, hidden
//! files, symbolic links), newest-first order, the cut at 100, the include filter, confinement
//! to the workspace, bad patterns and interruption; and their definitions against upstream's.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::glob::GlobTool;
use tandem_tools::grep::GrepTool;
use tokio_util::sync::CancellationToken;

/// Upstream's `glob` and `grep` function definitions from the captured LLM request (working
/// directory `/workspace/project`).
const UPSTREAM: &str = include_str!("fixtures/upstream_search_tools.json");

fn ctx(root: &Path) -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        working_dir: root.to_path_buf(),
        conversation_dir: None,
        env: Default::default(),
        masker: Masker::default(),
    }
}

/// Writes `text` to `root/relative`, creating its folders, modified `age_secs` seconds ago.
fn write(root: &Path, relative: &str, text: &str, age_secs: u64) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let when = SystemTime::now() - Duration::from_secs(age_secs);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// A canonical temporary workspace (the tools answer with resolved paths).
fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

async fn run(tool: &dyn Tool, root: &Path, args: Value) -> Value {
    run_with(tool, ctx(root), args).await
}

async fn run_with(tool: &dyn Tool, ctx: ToolContext, args: Value) -> Value {
    let action = tool.parse_action(args).expect("arguments parse");
    serde_json::to_value(tool.execute(&action, ctx).await).unwrap()
}

async fn glob(root: &Path, args: Value) -> Value {
    run(&GlobTool::new(root), root, args).await
}

async fn grep(root: &Path, args: Value) -> Value {
    run(&GrepTool::new(root), root, args).await
}

fn text(obs: &Value) -> String {
    obs["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The listed paths relative to `root`.
fn listed(obs: &Value, field: &str, root: &Path) -> Vec<String> {
    obs[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            Path::new(p.as_str().unwrap())
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn definitions_are_upstreams_with_this_working_directory() {
    let upstream: Value = serde_json::from_str(UPSTREAM).unwrap();
    let root = Path::new("/workspace/project");
    for tool in [
        Box::new(GlobTool::new(root)) as Box<dyn Tool>,
        Box::new(GrepTool::new(root)),
    ] {
        let def = tool.definition();
        let theirs = &upstream[def.name.as_str()];
        assert_eq!(def.description, theirs["description"], "{}", def.name);
        let mut parameters = theirs["parameters"].clone();
        parameters["properties"]
            .as_object_mut()
            .unwrap()
            .remove("summary");
        assert_eq!(def.parameters, parameters, "{}", def.name);
        assert!(!def.asks_security_risk);
        assert!(def.annotations.read_only);
    }
    let other = GlobTool::new(Path::new("/home/me/repo"));
    assert!(
        other
            .definition()
            .description
            .contains("Your current working directory is: /home/me/repo\n")
    );
}

#[tokio::test]
async fn glob_skips_gitignored_hidden_and_linked_files() {
    let (_dir, root) = workspace();
    write(&root, ".gitignore", "target/\n*.log\n", 10);
    write(&root, "src/main.rs", "fn main() {}", 10);
    write(&root, "src/lib.rs", "", 10);
    write(&root, "target/debug/build.rs", "", 10);
    write(&root, "src/debug.log", "", 10);
    write(&root, ".hidden/secret.rs", "", 10);
    write(&root, "src/.dot.rs", "", 10);
    write(&root, "sub/.ignore", "generated.rs\n", 10);
    write(&root, "sub/generated.rs", "", 10);
    write(&root, "sub/kept.rs", "", 10);
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "far.rs", "", 10);
    std::os::unix::fs::symlink(outside.path().join("far.rs"), root.join("src/link.rs")).unwrap();

    let obs = glob(&root, json!({"pattern": "**/*.rs"})).await;
    assert_eq!(obs["is_error"], false, "{obs}");
    let mut files = listed(&obs, "files", &root);
    files.sort();
    assert_eq!(files, ["src/lib.rs", "src/main.rs", "sub/kept.rs"]);
    assert_eq!(obs["search_path"], root.to_string_lossy().as_ref());
    assert_eq!(obs["pattern"], "**/*.rs");
    assert_eq!(obs["truncated"], false);
    assert_eq!(obs["kind"], "GlobObservation");
    assert!(text(&obs).starts_with(&format!(
        "Found 3 file(s) matching pattern '**/*.rs' in '{}':\n",
        root.display()
    )));

    // The same search from a workspace that is not a git repository or that is one.
    std::fs::create_dir(root.join(".git")).unwrap();
    let again = glob(&root, json!({"pattern": "**/*.rs"})).await;
    assert_eq!(again["files"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn glob_lists_newest_first_and_reads_patterns_as_rg_does() {
    let (_dir, root) = workspace();
    write(&root, "old.json", "", 300);
    write(&root, "conf/new.toml", "", 10);
    write(&root, "conf/mid.yaml", "", 100);
    write(&root, "conf/deep/x.txt", "", 5);
    write(&root, "src/a.ts", "", 50);
    write(&root, "src/ui/b.ts", "", 20);
    write(&root, "lib/c.ts", "", 1);

    let obs = glob(&root, json!({"pattern": "**/*.{json,yaml,yml,toml}"})).await;
    assert_eq!(
        listed(&obs, "files", &root),
        ["conf/new.toml", "conf/mid.yaml", "old.json"]
    );
    // No `/`: the file name, at any depth.
    let obs = glob(&root, json!({"pattern": "*.ts"})).await;
    assert_eq!(
        listed(&obs, "files", &root),
        ["lib/c.ts", "src/ui/b.ts", "src/a.ts"]
    );
    // With a `/`: the path below the search directory; `*` stays within one folder.
    let obs = glob(&root, json!({"pattern": "src/**/*.ts"})).await;
    assert_eq!(listed(&obs, "files", &root), ["src/ui/b.ts", "src/a.ts"]);
    let obs = glob(&root, json!({"pattern": "src/*.ts"})).await;
    assert_eq!(listed(&obs, "files", &root), ["src/a.ts"]);
    let obs = glob(&root, json!({"pattern": "./src/*.ts"})).await;
    assert_eq!(listed(&obs, "files", &root), ["src/a.ts"]);
    // `path` narrows the search; an absolute pattern names its directory itself.
    let obs = glob(&root, json!({"pattern": "*.ts", "path": root.join("src")})).await;
    assert_eq!(listed(&obs, "files", &root), ["src/ui/b.ts", "src/a.ts"]);
    assert_eq!(
        obs["search_path"],
        root.join("src").to_string_lossy().as_ref()
    );
    let absolute = format!("{}/conf/**/*", root.display());
    let obs = glob(&root, json!({"pattern": absolute})).await;
    assert_eq!(
        listed(&obs, "files", &root),
        ["conf/deep/x.txt", "conf/new.toml", "conf/mid.yaml"]
    );
    let obs = glob(&root, json!({"pattern": "**/*.nothing"})).await;
    assert_eq!(obs["is_error"], false);
    assert_eq!(
        text(&obs),
        format!(
            "No files found matching pattern '**/*.nothing' in directory '{}'",
            root.display()
        )
    );
}

#[tokio::test]
async fn glob_keeps_the_newest_100_and_says_it_cut() {
    let (_dir, root) = workspace();
    for i in 0..150 {
        write(&root, &format!("d{}/f{i:03}.txt", i % 7), "", 1000 + i);
    }
    let obs = glob(&root, json!({"pattern": "**/*.txt"})).await;
    assert_eq!(obs["truncated"], true);
    let files = listed(&obs, "files", &root);
    let expected: Vec<String> = (0..100)
        .map(|i| format!("d{}/f{i:03}.txt", i % 7))
        .collect();
    assert_eq!(files, expected);
    assert!(text(&obs).ends_with(
        "\n\n[Results truncated to first 100 files. Consider using a more specific pattern.]"
    ));
    // Exactly 100 is not cut.
    let obs = glob(&root, json!({"pattern": "**/f0[0-9][0-9].txt"})).await;
    assert_eq!(obs["files"].as_array().unwrap().len(), 100);
    assert_eq!(obs["truncated"], false);
}

#[tokio::test]
async fn grep_finds_files_by_content_newest_first_case_insensitively() {
    let (_dir, root) = workspace();
    write(&root, ".gitignore", "build/\n", 10);
    write(&root, "a.rs", "fn handle_Error() {}\n", 30);
    write(&root, "b.ts", "// log: fatal error here\n", 20);
    write(&root, "c.tsx", "const ERROR = 1;\n", 10);
    write(&root, "d.py", "nothing to see\n", 5);
    write(&root, "build/out.ts", "error\n", 1);
    write(&root, ".cache/e.ts", "error\n", 1);
    std::fs::write(root.join("bin.dat"), b"error\0\x01\x02").unwrap();

    let obs = grep(&root, json!({"pattern": "error"})).await;
    assert_eq!(obs["is_error"], false, "{obs}");
    assert_eq!(listed(&obs, "matches", &root), ["c.tsx", "b.ts", "a.rs"]);
    assert_eq!(obs["kind"], "GrepObservation");
    assert!(obs.get("include_pattern").is_none());
    assert_eq!(
        text(&obs),
        format!(
            "Found 3 file(s) containing pattern 'error' in '{0}':\n{0}/c.tsx\n{0}/b.ts\n{0}/a.rs",
            root.display()
        )
    );

    let obs = grep(
        &root,
        json!({"pattern": "log.*Error", "include": "*.{ts,tsx}"}),
    )
    .await;
    assert_eq!(listed(&obs, "matches", &root), ["b.ts"]);
    assert_eq!(obs["include_pattern"], "*.{ts,tsx}");
    assert!(text(&obs).contains(" (filtered by '*.{ts,tsx}'):\n"));

    let obs = grep(&root, json!({"pattern": "fn\\s+\\w+", "include": "*.py"})).await;
    assert_eq!(obs["matches"], json!([]));
    assert_eq!(
        text(&obs),
        format!(
            "No files found containing pattern 'fn\\s+\\w+' in directory '{}' (filtered by '*.py')",
            root.display()
        )
    );
}

#[tokio::test]
async fn grep_keeps_the_newest_100_matching_files() {
    let (_dir, root) = workspace();
    // Every third file matches; the newest have the lowest numbers.
    for i in 0..600u64 {
        let body = if i % 3 == 0 { "needle\n" } else { "hay\n" };
        write(&root, &format!("p{}/f{i:03}.txt", i % 5), body, 1000 + i);
    }
    let obs = grep(&root, json!({"pattern": "NEEDLE"})).await;
    assert_eq!(obs["truncated"], true);
    let expected: Vec<String> = (0..300)
        .step_by(3)
        .map(|i| format!("p{}/f{i:03}.txt", i % 5))
        .collect();
    assert_eq!(listed(&obs, "matches", &root), expected);
    assert!(text(&obs).ends_with("Consider using a more specific pattern.]"));
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let (_dir, root) = workspace();
    write(&root, "inside/a.txt", "x", 1);
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "b.txt", "x", 1);
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();

    for path in [
        outside.path().to_string_lossy().into_owned(),
        format!("{}/inside/../..", root.display()),
        "../".to_owned(),
        format!("{}/escape", root.display()),
    ] {
        let obs = glob(&root, json!({"pattern": "*", "path": path})).await;
        assert_eq!(obs["is_error"], true, "{path}: {obs}");
        assert!(
            text(&obs).contains("outside the workspace"),
            "{path}: {obs}"
        );
        let obs = grep(&root, json!({"pattern": "x", "path": path})).await;
        assert_eq!(obs["is_error"], true, "{path}: {obs}");
        assert!(
            text(&obs).contains("outside the workspace"),
            "{path}: {obs}"
        );
    }
    let absolute = format!("{}/*.txt", outside.path().display());
    let obs = glob(&root, json!({"pattern": absolute})).await;
    assert!(text(&obs).contains("outside the workspace"), "{obs}");

    // Inside but not a folder.
    let obs = grep(&root, json!({"pattern": "x", "path": "inside/a.txt"})).await;
    assert_eq!(
        text(&obs),
        "Search path 'inside/a.txt' is not a valid directory"
    );
    // A relative path is taken from the workspace.
    let obs = grep(&root, json!({"pattern": "x", "path": "inside"})).await;
    assert_eq!(listed(&obs, "matches", &root), ["inside/a.txt"]);
}

#[tokio::test]
async fn bad_patterns_are_named() {
    let (_dir, root) = workspace();
    write(&root, "a.txt", "x", 1);
    let obs = grep(&root, json!({"pattern": "fn (unclosed"})).await;
    assert_eq!(obs["is_error"], true);
    assert!(text(&obs).starts_with("Invalid regex pattern: "), "{obs}");
    assert!(text(&obs).contains("unclosed group"), "{obs}");
    assert_eq!(obs["pattern"], "fn (unclosed");

    let obs = glob(&root, json!({"pattern": "src/{a,b"})).await;
    assert_eq!(obs["is_error"], true);
    assert!(
        text(&obs).starts_with("Invalid glob pattern 'src/{a,b': unclosed alternate group"),
        "{obs}"
    );
    let obs = grep(&root, json!({"pattern": "x", "include": "*.[ts"})).await;
    assert_eq!(obs["is_error"], true);
    assert!(
        text(&obs).starts_with("Invalid glob pattern '*.[ts'"),
        "{obs}"
    );
}

#[tokio::test]
async fn an_interrupted_search_says_so() {
    let (_dir, root) = workspace();
    for i in 0..50 {
        write(&root, &format!("f{i}.txt"), "x", 1);
    }
    let ctx = ctx(&root);
    ctx.cancel.cancel();
    let obs = run_with(&GrepTool::new(&root), ctx.clone(), json!({"pattern": "x"})).await;
    assert_eq!(obs["is_error"], true);
    assert_eq!(text(&obs), "The search was interrupted.");
    let obs = run_with(&GlobTool::new(&root), ctx, json!({"pattern": "*"})).await;
    assert_eq!(obs["is_error"], true);
    assert_eq!(text(&obs), "The search was interrupted.");
}

#[tokio::test]
async fn the_catalog_makes_them_by_name_and_class_name() {
    let catalog = tandem_tools::builtin_catalog();
    let names = catalog.names();
    assert!(
        names.contains(&"glob") && names.contains(&"grep"),
        "{names:?}"
    );
    for (asked, made) in [
        ("glob", "glob"),
        ("GlobTool", "glob"),
        ("grep", "grep"),
        ("GrepTool", "grep"),
    ] {
        let env = tandem_sdk::ToolEnv::new("/srv/repo");
        let tools = catalog
            .make(asked, Default::default(), env)
            .await
            .expect("registered")
            .expect("made");
        assert_eq!(tools.len(), 1);
        let def = tools[0].definition();
        assert_eq!(def.name, made);
        assert!(
            def.description
                .contains("Your current working directory is: /srv/repo\n")
        );
    }
}
