//! The demo model: a friendly scripted agent for `tandem run --llm demo "task"`, so that a
//! newcomer sees the whole loop (plan, terminal, file editor, finish) without an API key.
//!
//! It is stateless: it decides which step it is on from the messages after the last user
//! message, so every turn of a multi-turn conversation replays the same short tour.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::script::{Reply, Responder, Step, ToolCallSpec};

/// The demo responder for a workspace rooted at `workspace_dir` (absolute paths of the files
/// it writes are built from it).
pub fn demo_responder(workspace_dir: &str) -> Responder {
    let workspace = workspace_dir.trim_end_matches('/').to_owned();
    let workspace = if workspace.is_empty() {
        "/".to_owned()
    } else {
        workspace
    };
    Arc::new(move |request: &Value, _index: usize| demo_step(&workspace, request))
}

fn demo_step(workspace: &str, request: &Value) -> Step {
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
            let path = free_notes_path(workspace);
            let text = format!(
                "# Tandem demo\n\nTask: {short_task}\n\nThis file was written by the scripted demo \
                 model, which shows the agent loop without an API key.\nConfigure a real model \
                 (for example `--llm openai/gpt-5` with an API key) to get real work done.\n"
            );
            call(
                "Now I'll write a small notes file.",
                "file_editor",
                json!({
                    "command": "create", "path": path, "file_text": text,
                    "summary": "Create the demo notes file", "security_risk": "LOW",
                }),
            )
        }
        4 => call(
            "Let me check the file.",
            "file_editor",
            json!({
                "command": "view", "path": created_path(after).unwrap_or_else(|| free_notes_path(workspace)),
                "summary": "View the notes file", "security_risk": "LOW",
            }),
        ),
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
            let path = created_path(after).unwrap_or_else(|| "a notes file".to_owned());
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

/// A notes file name not taken yet, so that `create` succeeds on every run.
fn free_notes_path(workspace: &str) -> String {
    let base = format!("{workspace}/tandem-demo-notes.md");
    if !Path::new(&base).exists() {
        return base;
    }
    (2..1000)
        .map(|n| format!("{workspace}/tandem-demo-notes-{n}.md"))
        .find(|p| !Path::new(p).exists())
        .unwrap_or(base)
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

    fn names(step: &Step) -> Vec<String> {
        match step {
            Step::Reply(r) => r.tool_calls.iter().map(|c| c.name.clone()).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn walks_the_tour_then_finishes() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().to_str().unwrap();
        let responder = demo_responder(workspace);
        let tools = json!([{"type": "function", "function": {"name": "terminal"}}]);
        let mut messages =
            vec![json!({"role": "user", "content": [{"type": "text", "text": "make notes"}]})];
        let mut seen = Vec::new();
        for i in 0..8 {
            let request = json!({"messages": messages, "tools": tools});
            let step = responder(&request, i);
            let Step::Reply(reply) = &step else {
                panic!("not a reply: {step:?}")
            };
            seen.extend(names(&step));
            if reply.tool_calls.is_empty() {
                break;
            }
            let id = format!("call_{i}");
            let call = &reply.tool_calls[0];
            messages.push(json!({"role": "assistant", "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text()},
            }]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": "ok"}));
        }
        assert_eq!(
            seen,
            [
                "task_tracker",
                "terminal",
                "terminal",
                "file_editor",
                "file_editor",
                "task_tracker",
                "finish"
            ]
        );
        let viewed = messages[9]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap();
        assert!(
            viewed.contains(&format!("{workspace}/tandem-demo-notes.md")),
            "{viewed}"
        );
    }

    #[test]
    fn no_tools_requests_get_a_title() {
        let responder = demo_responder("/w");
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
