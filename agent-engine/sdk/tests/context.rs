//! Agent context: skill frontmatter, trigger matching, workspace context files, the system prompt
//! and upstream's `AgentContext` JSON.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tandem_sdk::{
    AgentContext, MAX_CONTEXT_FILE_BYTES, PromptVars, Skill, load_user_skills,
    load_workspace_skills, render_system_prompt, user_skills_dir,
};

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
    path
}

fn vars(workspace: &Path) -> PromptVars {
    let mut v = PromptVars::new(workspace);
    v.os = "linux".into();
    v.arch = "x86_64".into();
    v.tools = vec![
        "terminal".into(),
        "file_editor".into(),
        "task_tracker".into(),
    ];
    v.date = chrono::NaiveDate::from_ymd_opt(2026, 1, 15);
    v
}

// ---- frontmatter ----

#[test]
fn markdown_without_frontmatter_is_always_on() {
    let s = Skill::parse_markdown("notes", "# Notes\n\nUse tabs.\n", None).unwrap();
    assert_eq!(s.name, "notes");
    assert_eq!(s.content, "# Notes\n\nUse tabs.");
    assert!(s.triggers.is_empty() && s.is_always_on());
    assert_eq!(s.source, None);
    assert_eq!(s.description, None);
}

#[test]
fn frontmatter_sets_name_triggers_and_description() {
    let text = "---\nname: docker-help\ntriggers:\n  - Docker\n  - container\n  - docker\n\
                description: How we build images\ntype: knowledge\nversion: 1.0.0\nagent: CodeActAgent\n---\n\
                Build with `make image`.\n";
    let src = Path::new("/w/.openhands/skills/docker.md");
    let s = Skill::parse_markdown("docker", text, Some(src)).unwrap();
    assert_eq!(s.name, "docker-help");
    assert_eq!(s.triggers, vec!["Docker", "container"]);
    assert_eq!(s.description.as_deref(), Some("How we build images"));
    assert_eq!(s.content, "Build with `make image`.");
    assert_eq!(s.source.as_deref(), Some(src));
}

#[test]
fn frontmatter_accepts_upstream_trigger_spellings() {
    let keywords = Skill::parse_markdown("a", "---\nkeywords: [k8s]\n---\nx", None).unwrap();
    assert_eq!(keywords.triggers, vec!["k8s"]);
    let single = Skill::parse_markdown("a", "---\ntriggers: deploy\n---\nx", None).unwrap();
    assert_eq!(single.triggers, vec!["deploy"]);
    let list = Skill::parse_markdown("a", "---\ntrigger: [a, b]\n---\nx", None).unwrap();
    assert_eq!(list.triggers, vec!["a", "b"]);
    let object = Skill::parse_markdown(
        "a",
        "---\ntrigger:\n  type: keyword\n  keywords: [npm, yarn]\n---\nx",
        None,
    )
    .unwrap();
    assert_eq!(object.triggers, vec!["npm", "yarn"]);
    let empty = Skill::parse_markdown("a", "---\ntriggers: []\n---\nx", None).unwrap();
    assert!(empty.is_always_on());
    let blank = Skill::parse_markdown("a", "---\n---\nbody", None).unwrap();
    assert_eq!((blank.name.as_str(), blank.content.as_str()), ("a", "body"));
}

#[test]
fn malformed_frontmatter_names_the_file_and_the_problem() {
    let src = Path::new("/w/.openhands/skills/broken.md");
    let err = Skill::parse_markdown("broken", "---\ntriggers: [a, b\n---\nbody", Some(src))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/w/.openhands/skills/broken.md"), "{err}");
    assert!(err.contains("YAML"), "{err}");

    let err = Skill::parse_markdown("broken", "---\ntriggers: {a: 1}\n---\n", Some(src))
        .unwrap_err()
        .to_string();
    assert!(err.contains("broken.md"), "{err}");

    let err = Skill::parse_markdown("hint", "---\nname: x\nno closing fence\n", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("hint:") && err.contains("never closed"),
        "{err}"
    );
}

// ---- triggers ----

#[test]
fn triggers_match_case_insensitively_at_word_starts() {
    let ctx = AgentContext {
        skills: vec![
            Skill::always_on("agents", "always"),
            Skill::keyword("git", "git tips", ["git"]),
            Skill::keyword(
                "docker",
                "docker tips",
                ["docker", "container", "Dockerfile"],
            ),
            Skill::keyword("deploy", "deploy tips", ["/deploy"]),
        ],
        ..AgentContext::default()
    };
    let names = |text: &str| -> Vec<String> {
        ctx.triggered(text)
            .into_iter()
            .map(|s| s.name.clone())
            .collect()
    };
    assert_eq!(names("Please GIT commit"), vec!["git"]);
    assert_eq!(names("open a GitHub issue"), vec!["git"]);
    assert!(names("digital signage").is_empty());
    // Several keywords of one skill still activate it once.
    assert_eq!(names("docker container with a DOCKERFILE"), vec!["docker"]);
    assert_eq!(names("run /deploy then git push"), vec!["git", "deploy"]);
    assert!(names("nothing relevant here").is_empty());
    // Always-on skills are never "triggered".
    assert!(names("always").is_empty());
    assert_eq!(
        ctx.always_on().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        vec!["agents"]
    );
}

#[test]
fn matched_trigger_reports_the_keyword_as_written() {
    let s = Skill::keyword("k", "", ["Kubernetes", "k8s"]);
    assert_eq!(s.matched_trigger("deploy to K8S"), Some("k8s"));
    assert_eq!(s.matched_trigger("kubernetes!"), Some("Kubernetes"));
    assert_eq!(s.matched_trigger("ok8s"), None);
}

#[test]
fn user_messages_get_prefix_and_suffix() {
    let mut ctx = AgentContext::default();
    assert_eq!(ctx.decorate_user_message("hi"), "hi");
    ctx.user_message_prefix = Some("[from the IDE]".into());
    ctx.user_message_suffix = Some("Answer briefly.".into());
    assert_eq!(
        ctx.decorate_user_message("hi"),
        "[from the IDE]\n\nhi\n\nAnswer briefly."
    );
    ctx.user_message_prefix = Some("   ".into());
    assert_eq!(ctx.decorate_user_message("hi"), "hi\n\nAnswer briefly.");
}

// ---- workspace loading ----

#[test]
fn loads_workspace_context_in_a_fixed_order() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    write(
        w,
        "AGENTS.md",
        "---\ntriggers: [ignored]\n---\nRun `cargo test`.\n",
    );
    write(w, ".cursorrules", "Prefer small functions.");
    write(w, ".openhands/skills/zeta.md", "Zeta always.");
    write(
        w,
        ".openhands/skills/alpha.md",
        "---\ntriggers: [alpha]\n---\nAlpha tips.",
    );
    write(w, ".openhands/skills/README.md", "About this folder.");
    write(w, ".openhands/skills/notes.txt", "not markdown");
    write(w, ".openhands/microagents/repo.md", "Legacy repo notes.");
    write(
        w,
        ".openhands/microagents/zeta.md",
        "Shadowed by the skills folder.",
    );
    write(
        w,
        ".agents/skills/beta.md",
        "---\nname: beta\ntriggers: beta\n---\nBeta.",
    );

    let (skills, warnings) = load_workspace_skills(w);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["agents", "cursorrules", "alpha", "zeta", "beta", "repo"]
    );
    // Root context files are always on, whatever their frontmatter says.
    assert!(skills[0].is_always_on());
    assert_eq!(skills[0].content, "Run `cargo test`.");
    assert_eq!(
        skills[0].source.as_deref(),
        Some(w.join("AGENTS.md").as_path())
    );
    assert_eq!(skills[2].triggers, vec!["alpha"]);
    assert!(skills[3].is_always_on());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(".openhands/microagents/zeta.md"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains(".openhands/skills/zeta.md"),
        "{warnings:?}"
    );

    // Same input, same output.
    assert_eq!(load_workspace_skills(w).0, skills);
}

#[test]
fn lowercase_agents_md_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "agents.md", "lower");
    let (skills, warnings) = load_workspace_skills(dir.path());
    assert!(warnings.is_empty());
    assert_eq!(skills.len(), 1);
    assert_eq!(
        (skills[0].name.as_str(), skills[0].content.as_str()),
        ("agents", "lower")
    );
}

#[test]
fn malformed_files_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    write(
        w,
        ".openhands/skills/bad.md",
        "---\ntriggers: [oops\n---\nbody",
    );
    write(w, ".openhands/skills/good.md", "fine");
    write(w, ".openhands/microagents/unclosed.md", "---\nname: x\n");
    fs::write(w.join(".openhands/skills/binary.md"), [0xffu8, 0xfe, 0x00]).unwrap();

    let (skills, warnings) = load_workspace_skills(w);
    assert_eq!(
        skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        vec!["good"]
    );
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains(".openhands/skills/bad.md") && warnings[0].contains("YAML"));
    assert!(warnings[1].contains(".openhands/skills/binary.md") && warnings[1].contains("UTF-8"));
    assert!(
        warnings[2].contains(".openhands/microagents/unclosed.md"),
        "{warnings:?}"
    );
}

#[test]
fn oversized_files_are_truncated_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(MAX_CONTEXT_FILE_BYTES * 2);
    write(dir.path(), "AGENTS.md", &big);
    let (skills, warnings) = load_workspace_skills(dir.path());
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("AGENTS.md"));
    let content = &skills[0].content;
    assert!(content.len() < MAX_CONTEXT_FILE_BYTES + 200);
    assert!(
        content.ends_with("are included ...]"),
        "{}",
        &content[content.len() - 120..]
    );
}

#[test]
fn claude_md_and_the_tandem_skills_folder_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    write(w, "AGENTS.md", "Agents.");
    write(w, "CLAUDE.md", "---\ntriggers: [never]\n---\nClaude rules.");
    write(w, ".cursorrules", "Cursor.");
    write(
        w,
        ".tandem/skills/deploy.md",
        "---\ntriggers: [deploy]\n---\nOurs.",
    );
    write(w, ".openhands/skills/deploy.md", "Theirs.");
    write(w, ".openhands/skills/lint.md", "Lint.");

    let (skills, warnings) = load_workspace_skills(w);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["agents", "claude", "cursorrules", "deploy", "lint"]);
    // A root file is always on, whatever its frontmatter says.
    assert!(skills[1].is_always_on());
    assert_eq!(skills[1].content, "Claude rules.");
    // Tandem's own folder wins over upstream's on a name clash, and says so.
    assert_eq!(skills[3].content, "Ours.");
    assert_eq!(skills[3].triggers, ["deploy"]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(".openhands/skills/deploy.md")
            && warnings[0].contains(".tandem/skills/deploy.md"),
        "{warnings:?}"
    );

    let lower = tempfile::tempdir().unwrap();
    write(lower.path(), "claude.md", "lower");
    let (skills, _) = load_workspace_skills(lower.path());
    assert_eq!(skills[0].name, "claude");
}

#[test]
fn user_skills_load_and_the_workspace_wins_a_name_clash() {
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("skills");
    write(&user, "git.md", "---\ntriggers: [git]\n---\nMy git habits.");
    write(&user, "style.md", "I like short functions.");
    write(&user, "README.md", "not a skill");
    write(&user, "broken.md", "---\ntriggers: [oops\n---\nbody");
    let (skills, warnings) = load_user_skills(&user);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["git", "style"]);
    // Outside the workspace: named by the full path.
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(&user.join("broken.md").display().to_string()),
        "{warnings:?}"
    );
    assert_eq!(
        load_user_skills(&home.path().join("none")),
        (vec![], vec![])
    );

    // As a conversation merges them: its own and the workspace's skills come first and win.
    let workspace = tempfile::tempdir().unwrap();
    write(workspace.path(), ".tandem/skills/git.md", "Repo git rules.");
    let mut ctx = AgentContext::default();
    ctx.skills.push(Skill::always_on("style", "Spec style."));
    ctx.add_project_skills(load_workspace_skills(workspace.path()).0);
    ctx.add_user_skills(skills);
    let merged: Vec<(&str, &str)> = ctx
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.content.as_str()))
        .collect();
    assert_eq!(
        merged,
        [("style", "Spec style."), ("git", "Repo git rules.")]
    );

    let mut ctx = AgentContext::default();
    ctx.add_user_skills(load_user_skills(&user).0);
    assert_eq!(ctx.activate("commit with git").activated_skills, ["git"]);
    assert_eq!(ctx.always_on().count(), 1);
}

/// Runs `user_skills_dir_follows_tandem_home_inner` in a child process with `TANDEM_HOME` set,
/// as the environment cannot be changed safely inside this one.
#[test]
fn user_skills_dir_follows_tandem_home() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "context::user_skills_dir_follows_tandem_home_inner",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("TANDEM_HOME", home.path())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(printed.contains("1 passed"), "{printed}");
}

#[test]
#[ignore = "run by user_skills_dir_follows_tandem_home with TANDEM_HOME set"]
fn user_skills_dir_follows_tandem_home_inner() {
    let home = PathBuf::from(std::env::var_os("TANDEM_HOME").unwrap());
    assert_eq!(user_skills_dir(), Some(home.join("skills")));
}

#[test]
fn missing_workspace_is_empty_without_warnings() {
    let (skills, warnings) = load_workspace_skills(Path::new("/nonexistent/tandem/workspace"));
    assert!(skills.is_empty() && warnings.is_empty());
}

// ---- system prompt ----

#[test]
fn prompt_has_the_core_sections_and_environment() {
    let w = Path::new("/home/me/project");
    let prompt = render_system_prompt(&AgentContext::default(), &vars(w)).unwrap();
    for section in [
        "<ROLE>",
        "<EFFICIENCY>",
        "<FILES>",
        "<VERSION_CONTROL>",
        "<RUNNING_CODE>",
        "<SECURITY>",
        "<TROUBLESHOOTING>",
        "<ASKING>",
        "<ENVIRONMENT>",
    ] {
        assert!(prompt.contains(section), "missing {section}");
    }
    assert!(prompt.contains("`/home/me/project`"));
    assert!(prompt.contains("linux (x86_64)"));
    assert!(prompt.contains("2026-01-15"));
    assert!(prompt.contains("terminal, file_editor, task_tracker"));
    assert!(prompt.contains("task tracker"));
    assert!(prompt.contains("sandbox"));
    assert!(!prompt.contains("<SECURITY_RISK>"));
    assert!(!prompt.contains("security_risk"));
    assert!(!prompt.contains("<REPOSITORY_CONTEXT>"));
    assert!(!prompt.contains("<KEYWORD_SKILLS>"));
    assert!(!prompt.contains("{{") && !prompt.contains("{%"));
    assert!(!prompt.contains("\n\n\n"));
    assert!(
        prompt.len() > 4_000 && prompt.len() < 8_000,
        "{} bytes",
        prompt.len()
    );
}

#[test]
fn security_risk_section_only_with_the_llm_analyzer() {
    let mut v = vars(Path::new("/w"));
    v.llm_security_analyzer = true;
    let prompt = render_system_prompt(&AgentContext::default(), &v).unwrap();
    assert!(prompt.contains("<SECURITY_RISK>"));
    assert!(prompt.contains("`security_risk`"));
    for level in ["`LOW`", "`MEDIUM`", "`HIGH`"] {
        assert!(prompt.contains(level), "missing {level}");
    }
    assert!(prompt.len() < 8_000, "{} bytes", prompt.len());
}

#[test]
fn cli_mode_changes_the_environment_note() {
    let mut v = vars(Path::new("/w"));
    v.cli_mode = true;
    v.shell = Some("zsh".into());
    v.os_description = Some("macOS 15".into());
    let prompt = render_system_prompt(&AgentContext::default(), &v).unwrap();
    assert!(prompt.contains("not in a sandbox"));
    assert!(prompt.contains("Shell: zsh"));
    assert!(prompt.contains("linux (x86_64), macOS 15"));
}

#[test]
fn prompt_renders_skills_and_suffix_last() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    write(
        w,
        "AGENTS.md",
        "Run `make check` before committing. {{ not_a_variable }}",
    );
    write(
        w,
        ".openhands/skills/docker.md",
        "---\ntriggers: [docker, container]\ndescription: Building images\n---\nSECRET DOCKER BODY",
    );
    let (skills, warnings) = load_workspace_skills(w);
    assert!(warnings.is_empty());
    let ctx = AgentContext {
        skills,
        system_message_suffix: Some("Reply in French.".into()),
        ..AgentContext::default()
    };
    let prompt = render_system_prompt(&ctx, &vars(w)).unwrap();

    assert!(prompt.contains("<REPOSITORY_CONTEXT>"));
    assert!(prompt.contains("<skill name=\"agents\" source=\"AGENTS.md\">"));
    // Skill text is data, not template source.
    assert!(prompt.contains("Run `make check` before committing. {{ not_a_variable }}"));
    assert!(prompt.contains("<KEYWORD_SKILLS>"));
    assert!(prompt.contains(
        "* docker (keywords: docker, container): Building images [.openhands/skills/docker.md]"
    ));
    // A keyword skill's body arrives with the message, not in the prompt.
    assert!(!prompt.contains("SECRET DOCKER BODY"));
    assert!(
        prompt.ends_with("\n\nReply in French."),
        "{}",
        &prompt[prompt.len() - 200..]
    );
    assert!(prompt.find("</REPOSITORY_CONTEXT>") < prompt.find("<KEYWORD_SKILLS>"));
}

#[test]
fn rendering_is_deterministic() {
    let ctx = AgentContext {
        skills: vec![Skill::always_on("a", "A")],
        ..Default::default()
    };
    let v = vars(Path::new("/w"));
    assert_eq!(
        render_system_prompt(&ctx, &v).unwrap(),
        render_system_prompt(&ctx, &v).unwrap()
    );
}

// ---- upstream JSON ----

#[test]
fn reads_an_upstream_shaped_agent_context() {
    let value = json!({
        "skills": [
            {
                "name": "repo",
                "content": "This repo uses pnpm.",
                "trigger": null,
                "source": "/workspace/.openhands/microagents/repo.md",
                "mcp_tools": null,
                "inputs": [],
                "is_agentskills_format": false,
                "version": "1.0.0",
                "description": null
            },
            {
                "name": "github",
                "content": "Use the gh CLI.",
                "trigger": {"type": "keyword", "keywords": ["github", "git"]},
                "description": "GitHub workflows"
            },
            {
                "name": "bug-fix",
                "content": "Reproduce first.",
                "trigger": {"type": "task", "triggers": ["/bugfix"]}
            }
        ],
        "system_message_suffix": "Be terse.",
        "user_message_suffix": "Think step by step.",
        "load_user_skills": false,
        "load_public_skills": false,
        "marketplace_path": "marketplaces/default.json",
        "secrets": null,
        "kind": "AgentContext"
    });
    let ctx = AgentContext::from_json(&value).unwrap();
    assert_eq!(ctx.skills.len(), 3);
    assert!(ctx.skills[0].is_always_on());
    assert_eq!(
        ctx.skills[0].source.as_deref(),
        Some(Path::new("/workspace/.openhands/microagents/repo.md"))
    );
    assert_eq!(ctx.skills[1].triggers, vec!["github", "git"]);
    assert_eq!(
        ctx.skills[1].description.as_deref(),
        Some("GitHub workflows")
    );
    assert_eq!(ctx.skills[2].triggers, vec!["/bugfix"]);
    assert_eq!(ctx.system_message_suffix.as_deref(), Some("Be terse."));
    assert_eq!(
        ctx.user_message_suffix.as_deref(),
        Some("Think step by step.")
    );
    assert_eq!(ctx.user_message_prefix, None);

    let activation = ctx.activate("please /bugfix the GitHub action");
    assert_eq!(activation.activated_skills, vec!["github", "bug-fix"]);
    assert_eq!(activation.extended_content.len(), 2);
}

#[test]
fn from_json_reads_our_prefix_and_rejects_bad_input() {
    let ctx = AgentContext::from_json(&json!({"user_message_prefix": "P"})).unwrap();
    assert_eq!(ctx.user_message_prefix.as_deref(), Some("P"));
    assert_eq!(
        AgentContext::from_json(&json!(null)).unwrap(),
        AgentContext::default()
    );

    let err = AgentContext::from_json(&json!({"skills": [{"content": "no name"}]}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("skills[0]") && err.contains("name"), "{err}");
    let err = AgentContext::from_json(&json!({"skills": [
        {"name": "a", "content": ""}, {"name": "a", "content": ""}
    ]}))
    .unwrap_err()
    .to_string();
    assert!(err.contains("duplicate"), "{err}");
    let err = AgentContext::from_json(&json!({"system_message_suffix": 3}))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("agent context:"), "{err}");
}
