//! The demo model: a friendly scripted agent for `tandem run --llm demo "task"`, so that a
//! newcomer sees the whole loop (plan, terminal, file editor, finish) without an API key.
//!
//! It is stateless: it decides which step it is on from the messages after the last user
//! message, so every turn of a multi-turn conversation replays the same short tour. Like a real
//! model it learns the conversation's workspace from the request (the system prompt names it,
//! and every terminal observation reports its working directory), so one demo server serves
//! any number of conversations, each in its own workspace.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::script::{Reply, Responder, Step, ToolCallSpec};

/// The name of the notes file the demo writes (`tandem-demo-notes-2.md`… when taken).
const NOTES: &str = "tandem-demo-notes";

/// The demo responder. It holds no workspace: each request says where the agent works.
pub fn demo_responder() -> Responder {
    Arc::new(|request: &Value, _index: usize| demo_step(request))
}

fn demo_step(request: &Value) -> Step {
    let messages: &[Value] = request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let has_tools = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let last_user = messages.iter().rposition(|m| role(m) == "user");
    let task = last_user.map(|i| text_of(&messages[i])).unwrap_or_default();
    if !has_tools {
        return Step::text(no_tools_text(messages, &task));
    }
    let after = last_user.map_or(messages, |i| &messages[i + 1..]);
    let turn = after.iter().filter(|m| role(m) == "assistant").count();
    let short_task = shorten(&task, 60);
    let workspace = workspace_of(messages);
    match turn {
        0 => call(
            "I'll start by planning the work.",
            "task_tracker",
            json!({"command": "plan", "task_list": [
                {"title": "Look around the workspace", "status": "in_progress"},
                {"title": "Write a notes file about the task", "status": "todo"},
                {"title": "Check the file and summarise", "status": "todo"},
            ], "summary": "Plan the demo task", "security_risk": "LOW"}),
        ),
        1 => call(
            "Let me see what is in the workspace.",
            "terminal",
            json!({"command": "ls -la", "summary": "List the workspace", "security_risk": "LOW"}),
        ),
        2 => call(
            "A harmless command to show the terminal at work.",
            "terminal",
            json!({
                "command": "echo 'Hello from the Tandem demo model'",
                "summary": "Print a greeting",
                "security_risk": "LOW",
            }),
        ),
        3 => {
            let text = format!(
                "# Tandem demo\n\nTask: {short_task}\n\nThis file was written by the scripted demo \
                 model, which shows the agent loop without an API key.\nConfigure a real model \
                 (for example `--llm openai/gpt-5` with an API key) to get real work done.\n"
            );
            let name = free_notes_name(workspace.as_deref(), after);
            match &workspace {
                Some(workspace) => call(
                    "Now I'll write a small notes file.",
                    "file_editor",
                    json!({
                        "command": "create", "path": join(workspace, &name), "file_text": text,
                        "summary": "Create the demo notes file", "security_risk": "LOW",
                    }),
                ),
                // The request never said where the workspace is: the terminal works in it.
                None => call(
                    "Now I'll write a small notes file.",
                    "terminal",
                    json!({
                        "command": format!("cat > {name} <<'TANDEM_DEMO_EOF'\n{text}TANDEM_DEMO_EOF"),
                        "summary": "Create the demo notes file", "security_risk": "LOW",
                    }),
                ),
            }
        }
        4 => match created_path(after) {
            Some(path) => call(
                "Let me check the file.",
                "file_editor",
                json!({
                    "command": "view", "path": path,
                    "summary": "View the notes file", "security_risk": "LOW",
                }),
            ),
            None => call(
                "Let me check the file.",
                "terminal",
                json!({
                    "command": format!("cat {}", written_name(after).unwrap_or_else(|| format!("{NOTES}.md"))),
                    "summary": "View the notes file", "security_risk": "LOW",
                }),
            ),
        },
        5 => call(
            "Everything is done; updating the plan.",
            "task_tracker",
            json!({"command": "plan", "task_list": [
                {"title": "Look around the workspace", "status": "done"},
                {"title": "Write a notes file about the task", "status": "done"},
                {"title": "Check the file and summarise", "status": "done"},
            ], "summary": "Mark the plan done", "security_risk": "LOW"}),
        ),
        6 => {
            let path = created_path(after)
                .or_else(|| written_name(after))
                .unwrap_or_else(|| "a notes file".to_owned());
            call(
                "",
                "finish",
                json!({
                    "message": format!(
                        "Demo finished for \"{short_task}\": I planned the work, listed the \
                         workspace, ran a command, wrote {path} and checked it. This was the \
                         scripted demo model; configure a real LLM to have the agent actually \
                         work on your task."
                    ),
                    "summary": "Finish the demo",
                }),
            )
        }
        _ => Step::text("The demo is complete. Send another message to see it again."),
    }
}

fn call(text: &str, name: &str, arguments: Value) -> Step {
    Step::Reply(Reply {
        text: (!text.is_empty()).then(|| text.to_owned()),
        tool_calls: vec![ToolCallSpec::new(name, arguments)],
        ..Reply::default()
    })
}

fn no_tools_text(messages: &[Value], task: &str) -> String {
    let asks_title = messages
        .iter()
        .any(|m| text_of(m).to_lowercase().contains("title"));
    if asks_title {
        // The message to title may be quoted inside the request (`<MESSAGE>…</MESSAGE>`).
        let quoted = task
            .split_once("<MESSAGE>")
            .and_then(|(_, rest)| rest.split_once("</MESSAGE>"))
            .map_or(task, |(inner, _)| inner);
        let words: Vec<&str> = quoted.split_whitespace().take(6).collect();
        if words.is_empty() {
            "Tandem demo".to_owned()
        } else {
            words.join(" ")
        }
    } else {
        "Summary: the demo model planned the task, ran harmless terminal commands, wrote a \
         notes file in the workspace, viewed it and finished."
            .to_owned()
    }
}

fn role(message: &Value) -> &str {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The text of a message whose content is a string or a list of parts.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max_chars {
        return line;
    }
    let mut short: String = line.chars().take(max_chars).collect();
    short.push('…');
    short
}

/// The workspace directory of the conversation, as the request tells it: Tandem's system
/// prompt names it (`The workspace is `…`` and `* Workspace: `…``, both before any repository
/// context, so the first mention is Tandem's own), and each terminal observation ends with
/// `[Current working directory: …]`. Only an absolute path counts.
fn workspace_of(messages: &[Value]) -> Option<String> {
    let system: String = messages
        .iter()
        .filter(|m| matches!(role(m), "system" | "developer"))
        .map(text_of)
        .collect::<Vec<_>>()
        .join("\n");
    let from_prompt = ["The workspace is `", "* Workspace: `"]
        .iter()
        .filter_map(|marker| {
            let at = system.find(marker)?;
            let rest = &system[at + marker.len()..];
            // The path ends at the line's last backquote: a folder name may hold one itself.
            let line = rest.split('\n').next().unwrap_or_default();
            Some((at, line.rsplit_once('`')?.0))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, path)| path.to_owned());
    from_prompt
        .into_iter()
        .chain(
            messages
                .iter()
                .filter(|m| role(m) == "tool")
                .filter_map(|m| {
                    let text = text_of(m);
                    let (_, rest) = text.split_once("[Current working directory: ")?;
                    Some(rest.split_once(']')?.0.to_owned())
                }),
        )
        .map(|p| p.trim().to_owned())
        .find(|p| !p.contains('\n') && Path::new(p).is_absolute())
}

/// `name` inside `workspace`, with the workspace's own separator.
fn join(workspace: &str, name: &str) -> String {
    let sep = if workspace.contains('\\') && !workspace.contains('/') {
        '\\'
    } else {
        '/'
    };
    if workspace.ends_with(sep) {
        format!("{workspace}{name}")
    } else {
        format!("{workspace}{sep}{name}")
    }
}

/// A notes file name not taken yet, so that `create` succeeds on every run: neither in the
/// workspace listing the terminal showed this turn nor on disk (when the workspace is known).
fn free_notes_name(workspace: Option<&str>, after_user: &[Value]) -> String {
    let listing: String = after_user
        .iter()
        .filter(|m| role(m) == "tool")
        .map(text_of)
        .collect::<Vec<_>>()
        .join("\n");
    let listed: Vec<&str> = listing.split_whitespace().collect();
    let taken = |name: &str| {
        listed.contains(&name) || workspace.is_some_and(|w| Path::new(&join(w, name)).exists())
    };
    std::iter::once(format!("{NOTES}.md"))
        .chain((2..1000).map(|n| format!("{NOTES}-{n}.md")))
        .find(|name| !taken(name))
        .unwrap_or_else(|| format!("{NOTES}.md"))
}

/// The file name the terminal wrote the notes to (when the workspace was not known).
fn written_name(after_user: &[Value]) -> Option<String> {
    after_user
        .iter()
        .filter(|m| role(m) == "assistant")
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter(|c| c.pointer("/function/name").and_then(Value::as_str) == Some("terminal"))
        .filter_map(|c| c.pointer("/function/arguments").and_then(Value::as_str))
        .filter_map(|args| serde_json::from_str::<Value>(args).ok())
        .filter_map(|args| {
            args.get("command")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .find_map(|command| {
            let rest = command.strip_prefix("cat > ")?;
            Some(rest.split_whitespace().next()?.to_owned())
        })
}

/// The path of the file this turn created, read back from the assistant's `create` call.
fn created_path(after_user: &[Value]) -> Option<String> {
    after_user
        .iter()
        .filter(|m| role(m) == "assistant")
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter(|c| c.pointer("/function/name").and_then(Value::as_str) == Some("file_editor"))
        .filter_map(|c| c.pointer("/function/arguments").and_then(Value::as_str))
        .filter_map(|args| serde_json::from_str::<Value>(args).ok())
        .find(|args| args.get("command").and_then(Value::as_str) == Some("create"))
        .and_then(|args| args.get("path").and_then(Value::as_str).map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays the tour against `responder`, answering each call with `answer(name, args)`;
    /// returns the tool names called and the arguments of each call.
    fn tour(system: &str, answer: impl Fn(&str, &Value) -> String) -> (Vec<String>, Vec<Value>) {
        let responder = demo_responder();
        let tools = json!([{"type": "function", "function": {"name": "terminal"}}]);
        let mut messages = vec![
            json!({"role": "system", "content": system}),
            json!({"role": "user", "content": [{"type": "text", "text": "make notes"}]}),
        ];
        let (mut names, mut args) = (Vec::new(), Vec::new());
        for i in 0..10 {
            let request = json!({"messages": messages, "tools": tools});
            let step = responder(&request, i);
            let Step::Reply(reply) = &step else {
                panic!("not a reply: {step:?}")
            };
            let Some(call) = reply.tool_calls.first() else {
                break;
            };
            let id = format!("call_{i}");
            let arguments: Value = serde_json::from_str(&call.arguments_text()).unwrap();
            messages.push(json!({"role": "assistant", "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text()},
            }]}));
            let result = answer(&call.name, &arguments);
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
            names.push(call.name.clone());
            args.push(arguments);
        }
        (names, args)
    }

    fn prompt(workspace: &str) -> String {
        format!(
            "<FILES>\n* The workspace is `{workspace}`. Use absolute paths inside it.\n</FILES>\n\
             <ENVIRONMENT>\n* Workspace: `{workspace}`\n</ENVIRONMENT>\n\
             <REPOSITORY_CONTEXT>\n* Workspace: `/somewhere/else`\n</REPOSITORY_CONTEXT>"
        )
    }

    const TOUR: [&str; 7] = [
        "task_tracker",
        "terminal",
        "terminal",
        "file_editor",
        "file_editor",
        "task_tracker",
        "finish",
    ];

    #[test]
    fn writes_in_the_workspace_the_system_prompt_names() {
        let ok = |_: &str, _: &Value| "ok".to_owned();
        for workspace in ["/home/ann/project", "/tmp/other place", "/tmp/it`s ünïcode"] {
            let (names, args) = tour(&prompt(workspace), ok);
            assert_eq!(names, TOUR);
            let created = format!("{workspace}/tandem-demo-notes.md");
            assert_eq!(args[3]["path"], created.as_str());
            assert_eq!(args[4]["path"], created.as_str());
            assert!(args[6]["message"].as_str().unwrap().contains(&created));
        }
    }

    #[test]
    fn learns_the_workspace_from_the_terminal_when_the_prompt_does_not_say() {
        let (names, args) = tour("You are a helpful agent.", |name, _| {
            if name == "terminal" {
                "total 0\n[Current working directory: /srv/work]\n[Command finished with exit code 0]"
                    .to_owned()
            } else {
                "ok".to_owned()
            }
        });
        assert_eq!(names, TOUR);
        assert_eq!(args[3]["path"], "/srv/work/tandem-demo-notes.md");
    }

    #[test]
    fn a_taken_name_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().to_str().unwrap();
        std::fs::write(dir.path().join("tandem-demo-notes.md"), "mine").unwrap();
        let (_, args) = tour(&prompt(workspace), |name, _| {
            if name == "terminal" {
                "-rw-r--r-- 1 ann ann 4 tandem-demo-notes-2.md".to_owned()
            } else {
                "ok".to_owned()
            }
        });
        // On disk: -1 taken; in the listing the terminal showed: -2 taken.
        assert_eq!(
            args[3]["path"],
            format!("{workspace}/tandem-demo-notes-3.md").as_str()
        );
    }

    #[test]
    fn without_a_known_workspace_the_terminal_writes_the_notes() {
        let (names, args) = tour("You are a demo.", |_, _| "ok".to_owned());
        assert_eq!(
            names,
            [
                "task_tracker",
                "terminal",
                "terminal",
                "terminal",
                "terminal",
                "task_tracker",
                "finish"
            ]
        );
        let write = args[3]["command"].as_str().unwrap();
        assert!(
            write.starts_with("cat > tandem-demo-notes.md <<"),
            "{write}"
        );
        assert_eq!(args[4]["command"], "cat tandem-demo-notes.md");
        assert!(
            args[6]["message"]
                .as_str()
                .unwrap()
                .contains("wrote tandem-demo-notes.md")
        );
    }

    #[test]
    fn relative_or_multiline_workspaces_are_ignored() {
        let messages = [json!({"role": "system", "content": "The workspace is `notes`."})];
        assert_eq!(workspace_of(&messages), None);
        let messages = [json!({"role": "system", "content": [
            {"type": "text", "text": "* Workspace: `/a/b`"}
        ]})];
        assert_eq!(workspace_of(&messages).as_deref(), Some("/a/b"));
    }

    #[test]
    fn no_tools_requests_get_a_title() {
        let responder = demo_responder();
        let request = json!({"messages": [
            {"role": "system", "content": "You generate concise, descriptive titles."},
            {"role": "user", "content": "fix the flaky login test please"},
        ]});
        assert_eq!(
            responder(&request, 0),
            Step::text("fix the flaky login test please")
        );
    }
}
