//! `file_editor` end to end against temporary workspaces: every command, its error cases, and
//! the observation shapes upstream writes.

use std::path::Path;

use serde_json::{Value, json};
use tandem_protocol::{Action, Observation};
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::FileEditorTool;
use tokio_util::sync::CancellationToken;

fn ctx(root: &Path) -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        working_dir: root.to_path_buf(),
        conversation_dir: None,
        env: Default::default(),
        masker: Masker::default(),
    }
}

/// Runs one call and returns the observation as wire JSON (without `kind`'s sibling noise).
async fn call(tool: &FileEditorTool, root: &Path, args: Value) -> Value {
    let action = tool.parse_action(args).expect("arguments parse");
    let obs = tool.execute(&action, ctx(root)).await;
    assert!(matches!(obs, Observation::FileEditor(_)));
    serde_json::to_value(&obs).unwrap()
}

fn text(obs: &Value) -> &str {
    obs["content"][0]["text"].as_str().unwrap()
}

fn workspace() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path())
        .unwrap()
        .display()
        .to_string();
    (dir, root)
}

#[tokio::test]
async fn create_then_view_match_the_upstream_observations() {
    let (_dir, root) = workspace();
    let tool = FileEditorTool::new();
    let path = format!("{root}/hello.txt");
    let created = call(
        &tool,
        root.as_ref(),
        json!({"command": "create", "path": path, "file_text": "hello\n"}),
    )
    .await;
    assert_eq!(
        created,
        json!({
            "content": [{"cache_prompt": false, "type": "text", "text": format!("File created successfully at: {path}")}],
            "is_error": false,
            "command": "create",
            "path": path,
            "prev_exist": false,
            "new_content": "hello\n",
            "kind": "FileEditorObservation"
        })
    );
    let viewed = call(
        &tool,
        root.as_ref(),
        json!({"command": "view", "path": path}),
    )
    .await;
    assert_eq!(
        viewed,
        json!({
            "content": [{"cache_prompt": false, "type": "text", "text": format!("Here's the result of running `cat -n` on {path}:\n     1\thello\n")}],
            "is_error": false,
            "command": "view",
            "path": path,
            "prev_exist": true,
            "kind": "FileEditorObservation"
        })
    );
}

#[tokio::test]
async fn create_makes_parent_directories_and_refuses_to_overwrite() {
    let (_dir, root) = workspace();
    let tool = FileEditorTool::new();
    let path = format!("{root}/a/b/c.txt");
    let created = call(
        &tool,
        root.as_ref(),
        json!({"command": "create", "path": path, "file_text": "x"}),
    )
    .await;
    assert_eq!(created["is_error"], false);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x");

    let again = call(
        &tool,
        root.as_ref(),
        json!({"command": "create", "path": path, "file_text": "y"}),
    )
    .await;
    assert_eq!(again["is_error"], true);
    assert_eq!(
        text(&again),
        format!(
            "Invalid `path` parameter: {path}. File already exists at: {path}. Cannot overwrite files using command `create`."
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x");

    let missing = call(
        &tool,
        root.as_ref(),
        json!({"command": "create", "path": format!("{root}/n.txt")}),
    )
    .await;
    assert_eq!(
        text(&missing),
        "Parameter `file_text` is required for command: create."
    );
}

#[tokio::test]
async fn view_ranges_are_validated() {
    let (_dir, root) = workspace();
    let path = format!("{root}/f.txt");
    std::fs::write(&path, "one\ntwo\nthree\nfour\n").unwrap();
    let tool = FileEditorTool::new();
    let view = |range: Value| {
        call(
            &tool,
            root.as_ref(),
            json!({"command": "view", "path": path, "view_range": range}),
        )
    };

    let middle = view(json!([2, 3])).await;
    assert_eq!(
        text(&middle),
        format!("Here's the result of running `cat -n` on {path}:\n     2\ttwo\n     3\tthree\n")
    );
    let to_end = view(json!([3, -1])).await;
    assert_eq!(
        text(&to_end),
        format!("Here's the result of running `cat -n` on {path}:\n     3\tthree\n     4\tfour\n")
    );
    let past_end = view(json!([4, 9])).await;
    assert_eq!(
        text(&past_end),
        format!(
            "NOTE: We only show up to 4 since there're only 4 lines in this file.\nHere's the result of running `cat -n` on {path}:\n     4\tfour\n"
        )
    );

    let cases = [
        (
            json!([0, 2]),
            "Invalid `view_range` parameter: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 4].",
        ),
        (
            json!([5, 6]),
            "Invalid `view_range` parameter: [5, 6]. Its first element `5` should be within the range of lines of the file: [1, 4].",
        ),
        (
            json!([3, 2]),
            "Invalid `view_range` parameter: [3, 2]. Its second element `2` should be greater than or equal to the first element `3`.",
        ),
        (
            json!([1]),
            "Invalid `view_range` parameter: [1]. It should be a list of two integers.",
        ),
    ];
    for (range, expected) in cases {
        let obs = view(range.clone()).await;
        assert_eq!(obs["is_error"], true, "{range}");
        assert_eq!(text(&obs), expected);
    }
}

#[tokio::test]
async fn directory_view_lists_two_levels_without_hidden_entries() {
    let (_dir, root) = workspace();
    let r = Path::new(&root);
    std::fs::create_dir_all(r.join("src/deep/deeper")).unwrap();
    std::fs::create_dir_all(r.join(".git")).unwrap();
    std::fs::write(r.join("README.md"), "x").unwrap();
    std::fs::write(r.join("src/main.rs"), "x").unwrap();
    std::fs::write(r.join("src/.hidden"), "x").unwrap();
    std::fs::write(r.join("src/deep/too_deep.rs"), "x").unwrap();
    std::fs::write(r.join(".env"), "x").unwrap();
    let tool = FileEditorTool::new();
    let obs = call(&tool, r, json!({"command": "view", "path": root})).await;
    assert_eq!(
        text(&obs),
        format!(
            "Here's the files and directories up to 2 levels deep in {root}, excluding hidden items:\n\
             {root}/\n{root}/README.md\n{root}/src/\n{root}/src/deep/\n{root}/src/main.rs\n\n\
             2 hidden files/directories in this directory are excluded. You can use 'ls -la {root}' to see them."
        )
    );
    let ranged = call(
        &tool,
        r,
        json!({"command": "view", "path": root, "view_range": [1, 2]}),
    )
    .await;
    assert_eq!(ranged["is_error"], true);
    assert!(text(&ranged).contains("not allowed when `path` points to a directory"));
}

#[tokio::test]
async fn str_replace_needs_exactly_one_match() {
    let (_dir, root) = workspace();
    let path = format!("{root}/f.py");
    std::fs::write(&path, "a = 1\nb = 2\na = 1\nc = 3\n").unwrap();
    let tool = FileEditorTool::new();

    let none = call(
        &tool,
        root.as_ref(),
        json!({"command": "str_replace", "path": path, "old_str": "zzz", "new_str": "y"}),
    )
    .await;
    assert_eq!(none["is_error"], true);
    assert_eq!(
        text(&none),
        format!("No replacement was performed, old_str `zzz` did not appear verbatim in {path}.")
    );

    let two = call(
        &tool,
        root.as_ref(),
        json!({"command": "str_replace", "path": path, "old_str": "a = 1", "new_str": "a = 9"}),
    )
    .await;
    assert_eq!(
        text(&two),
        "No replacement was performed. Multiple occurrences of old_str `a = 1` in lines [1, 3]. Please ensure it is unique."
    );

    let same = call(
        &tool,
        root.as_ref(),
        json!({"command": "str_replace", "path": path, "old_str": "b = 2", "new_str": "b = 2"}),
    )
    .await;
    assert_eq!(
        text(&same),
        "Invalid `new_str` parameter: b = 2. No replacement was performed. `new_str` and `old_str` must be different."
    );

    let missing = call(
        &tool,
        root.as_ref(),
        json!({"command": "str_replace", "path": path}),
    )
    .await;
    assert_eq!(
        text(&missing),
        "Parameter `old_str` is required for command: str_replace."
    );

    let one = call(
        &tool,
        root.as_ref(),
        json!({"command": "str_replace", "path": path, "old_str": "b = 2", "new_str": "b = 20"}),
    )
    .await;
    assert_eq!(
        one,
        json!({
            "content": [{"cache_prompt": false, "type": "text", "text": format!(
                "The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n\
                 \x20    1\ta = 1\n     2\tb = 20\n     3\ta = 1\n     4\tc = 3\n\
                 Review the changes and make sure they are as expected. Edit the file again if necessary."
            )}],
            "is_error": false,
            "command": "str_replace",
            "path": path,
            "prev_exist": true,
            "old_content": "a = 1\nb = 2\na = 1\nc = 3\n",
            "new_content": "a = 1\nb = 20\na = 1\nc = 3\n",
            "kind": "FileEditorObservation"
        })
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "a = 1\nb = 20\na = 1\nc = 3\n"
    );
}

#[tokio::test]
async fn insert_after_a_line_and_validates_the_line() {
    let (_dir, root) = workspace();
    let path = format!("{root}/f.txt");
    std::fs::write(&path, "one\ntwo").unwrap();
    let tool = FileEditorTool::new();

    let out_of_range = call(
        &tool,
        root.as_ref(),
        json!({"command": "insert", "path": path, "insert_line": 3, "new_str": "x"}),
    )
    .await;
    assert_eq!(out_of_range["is_error"], true);
    assert_eq!(
        text(&out_of_range),
        "Invalid `insert_line` parameter: 3. It should be within the range of allowed values: [0, 2]"
    );
    let negative = call(
        &tool,
        root.as_ref(),
        json!({"command": "insert", "path": path, "insert_line": -1, "new_str": "x"}),
    )
    .await;
    assert_eq!(negative["is_error"], true);
    let no_line = call(
        &tool,
        root.as_ref(),
        json!({"command": "insert", "path": path, "new_str": "x"}),
    )
    .await;
    assert_eq!(
        text(&no_line),
        "Parameter `insert_line` is required for command: insert."
    );

    let top = call(
        &tool,
        root.as_ref(),
        json!({"command": "insert", "path": path, "insert_line": 0, "new_str": "zero"}),
    )
    .await;
    assert_eq!(top["is_error"], false);
    assert_eq!(top["old_content"], "one\ntwo");
    assert_eq!(top["new_content"], "zero\none\ntwo");
    let end = call(
        &tool,
        root.as_ref(),
        json!({"command": "insert", "path": path, "insert_line": 3, "new_str": "three\n"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "zero\none\ntwo\nthree\n"
    );
    assert_eq!(
        text(&end),
        format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n\
             \x20    1\tzero\n     2\tone\n     3\ttwo\n     4\tthree\n\
             Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
        )
    );
}

#[tokio::test]
async fn undo_restores_each_previous_version_then_reports_no_history() {
    let (_dir, root) = workspace();
    let path = format!("{root}/u.txt");
    let tool = FileEditorTool::new();
    let r: &Path = root.as_ref();

    std::fs::write(&path, "original\n").unwrap();
    let none = call(&tool, r, json!({"command": "undo_edit", "path": path})).await;
    assert_eq!(none["is_error"], true);
    assert_eq!(text(&none), format!("No edit history found for {path}."));

    call(
        &tool,
        r,
        json!({"command": "str_replace", "path": path, "old_str": "original", "new_str": "first"}),
    )
    .await;
    call(
        &tool,
        r,
        json!({"command": "str_replace", "path": path, "old_str": "first", "new_str": "second"}),
    )
    .await;
    let undone = call(&tool, r, json!({"command": "undo_edit", "path": path})).await;
    assert_eq!(undone["is_error"], false);
    assert_eq!(undone["old_content"], "second\n");
    assert_eq!(undone["new_content"], "first\n");
    assert_eq!(
        text(&undone),
        format!(
            "Last edit to {path} undone successfully. Here's the result of running `cat -n` on {path}:\n     1\tfirst\n"
        )
    );
    call(&tool, r, json!({"command": "undo_edit", "path": path})).await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "original\n");
    let empty = call(&tool, r, json!({"command": "undo_edit", "path": path})).await;
    assert_eq!(empty["is_error"], true);
}

#[tokio::test]
async fn undo_of_a_create_removes_the_file() {
    let (_dir, root) = workspace();
    let path = format!("{root}/new.txt");
    let tool = FileEditorTool::new();
    call(
        &tool,
        root.as_ref(),
        json!({"command": "create", "path": path, "file_text": "n\n"}),
    )
    .await;
    let undone = call(
        &tool,
        root.as_ref(),
        json!({"command": "undo_edit", "path": path}),
    )
    .await;
    assert_eq!(undone["is_error"], false);
    assert!(!Path::new(&path).exists());
}

#[tokio::test]
async fn paths_must_be_absolute_and_inside_the_workspace() {
    let (_dir, root) = workspace();
    let outside = tempfile::tempdir().unwrap();
    let outside_root = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::write(outside_root.join("secret.txt"), "s").unwrap();
    std::fs::write(Path::new(&root).join("in.txt"), "i").unwrap();
    std::os::unix::fs::symlink(&outside_root, Path::new(&root).join("link")).unwrap();
    let tool = FileEditorTool::new();
    let r: &Path = root.as_ref();

    let relative = call(&tool, r, json!({"command": "view", "path": "in.txt"})).await;
    assert_eq!(relative["is_error"], true);
    assert_eq!(
        text(&relative),
        format!(
            "Invalid `path` parameter: in.txt. The path should be an absolute path, starting with `/`. Maybe you meant {root}/in.txt?"
        )
    );

    let dotdot = format!(
        "{root}/../{}/secret.txt",
        outside_root.file_name().unwrap().to_string_lossy()
    );
    let escaped = call(&tool, r, json!({"command": "view", "path": dotdot})).await;
    assert_eq!(escaped["is_error"], true);
    assert!(
        text(&escaped).contains("outside the workspace"),
        "{}",
        text(&escaped)
    );
    assert!(text(&escaped).contains("use the terminal"));

    let via_link = format!("{root}/link/secret.txt");
    for args in [
        json!({"command": "view", "path": via_link}),
        json!({"command": "create", "path": format!("{root}/link/new.txt"), "file_text": "x"}),
        json!({"command": "str_replace", "path": via_link, "old_str": "s", "new_str": "t"}),
    ] {
        let obs = call(&tool, r, args.clone()).await;
        assert_eq!(obs["is_error"], true, "{args}");
        assert!(
            text(&obs).contains(&format!("(it resolves to {}", outside_root.display())),
            "{}",
            text(&obs)
        );
    }
    assert!(!outside_root.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(outside_root.join("secret.txt")).unwrap(),
        "s"
    );

    let inside_dotdot = call(
        &tool,
        r,
        json!({"command": "view", "path": format!("{root}/sub/../in.txt")}),
    )
    .await;
    assert_eq!(inside_dotdot["is_error"], false);
}

#[tokio::test]
async fn missing_paths_directories_binary_and_large_files_are_refused() {
    let (_dir, root) = workspace();
    let r: &Path = root.as_ref();
    let tool = FileEditorTool::new().with_max_file_size(1024);

    let missing = format!("{root}/nope.txt");
    let obs = call(&tool, r, json!({"command": "view", "path": missing})).await;
    assert_eq!(
        text(&obs),
        format!(
            "Invalid `path` parameter: {missing}. The path {missing} does not exist. Please provide a valid path."
        )
    );

    let obs = call(
        &tool,
        r,
        json!({"command": "insert", "path": root, "insert_line": 0, "new_str": "x"}),
    )
    .await;
    assert_eq!(
        text(&obs),
        format!(
            "Invalid `path` parameter: {root}. The path {root} is a directory and only the `view` command can be used on directories."
        )
    );

    let binary = format!("{root}/b.bin");
    std::fs::write(&binary, [0x7f, b'E', b'L', b'F', 0, 1, 2]).unwrap();
    let obs = call(&tool, r, json!({"command": "view", "path": binary})).await;
    assert_eq!(obs["is_error"], true);
    assert_eq!(
        text(&obs),
        format!(
            "File validation failed for {binary}: File appears to be binary (or is not UTF-8 text) and this file type cannot be read or edited by this tool."
        )
    );

    let large = format!("{root}/large.txt");
    std::fs::write(&large, "x".repeat(4096)).unwrap();
    let obs = call(
        &tool,
        r,
        json!({"command": "str_replace", "path": large, "old_str": "x", "new_str": "y"}),
    )
    .await;
    assert_eq!(obs["is_error"], true);
    assert!(
        text(&obs).starts_with(&format!(
            "File validation failed for {large}: File is too large"
        )),
        "{}",
        text(&obs)
    );
}

#[tokio::test]
async fn long_files_are_clipped() {
    let (_dir, root) = workspace();
    let path = format!("{root}/long.txt");
    std::fs::write(&path, "line of text\n".repeat(5000)).unwrap();
    let obs = call(
        &FileEditorTool::new(),
        root.as_ref(),
        json!({"command": "view", "path": path}),
    )
    .await;
    assert!(text(&obs).contains("<response clipped>"));
    assert!(text(&obs).len() < 17_000);
}

#[test]
fn parse_action_names_the_bad_field() {
    let tool = FileEditorTool::new();
    let err = |args: Value| tool.parse_action(args).unwrap_err().to_string();
    assert_eq!(
        err(json!({"path": "/w"})),
        "missing required field `command`"
    );
    assert_eq!(
        err(json!({"command": "view"})),
        "missing required field `path`"
    );
    assert_eq!(
        err(json!({"command": "delete", "path": "/w"})),
        "field `command` must be one of view, create, str_replace, insert, undo_edit, got `delete`"
    );
    assert_eq!(
        err(json!({"command": "insert", "path": "/w", "insert_line": "two"})),
        "field `insert_line` must be an integer, got \"two\""
    );
    assert_eq!(
        err(json!({"command": "view", "path": "/w", "view_range": [1, "x"]})),
        "field `view_range[1]` must be an integer, got \"x\""
    );
    assert_eq!(
        err(json!({"command": "create", "path": "/w", "file_text": 3})),
        "field `file_text` must be a string, got a number"
    );
    assert_eq!(
        err(json!("view")),
        "the arguments must be a JSON object, got a string"
    );

    // What models commonly send loosely still parses.
    let Action::FileEditor(a) = tool
        .parse_action(json!({"command": "view", "path": "/w", "insert_line": "3", "view_range": "[1, -1]", "old_str": null}))
        .unwrap()
    else {
        panic!("not a file editor action");
    };
    assert_eq!(a.insert_line, Some(3));
    assert_eq!(a.view_range, Some(vec![1, -1]));
    assert_eq!(a.old_str, None);
}
