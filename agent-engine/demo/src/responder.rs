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

/// The start of the task the tour hands to a sub-agent: a conversation whose task starts so
/// does the sub-agent's short tour instead of the whole one.
pub const SUB_TASK: &str = "[Tandem demo sub-task]";

/// The parts of the tour, in order. Which ones a conversation gets depends on its tools: the
/// browser's only with the browser tools (and the demo site), the takeover only with
/// `browser_request_handoff` (a person is there to take over), the sub-agent only with `task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Plan,
    List,
    Greet,
    WriteNotes,
    ViewNotes,
    Approval,
    Browse,
    ReadPage,
    Handoff,
    OpenAccount,
    ReadAccount,
    Delegate,
    PlanDone,
    Finish,
}

/// What the conversation can do, from its request.
struct Abilities {
    /// The demo site's address, when the agent has a browser and the server serves the site.
    site: Option<String>,
    handoff: bool,
    delegate: bool,
}

impl Abilities {
    fn of(request: &Value) -> Self {
        let tools: Vec<&str> = request
            .get("tools")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        let has = |name: &str| tools.contains(&name);
        let browses = has("browser_navigate") && has("browser_get_content");
        let site = request
            .get(crate::site::SITE_FIELD)
            .and_then(Value::as_str)
            .filter(|_| browses)
            .map(str::to_owned);
        Self {
            handoff: site.is_some() && has("browser_request_handoff"),
            site,
            delegate: has("task"),
        }
    }

    fn stages(&self) -> Vec<Stage> {
        use Stage::*;
        let mut out = vec![List, Greet, WriteNotes, ViewNotes, Approval];
        if self.site.is_some() {
            out.extend([Browse, ReadPage]);
        }
        if self.handoff {
            out.extend([Handoff, OpenAccount, ReadAccount]);
        }
        if self.delegate {
            out.push(Delegate);
        }
        let mut tour = vec![Plan];
        tour.extend(out);
        tour.extend([PlanDone, Finish]);
        tour
    }

    fn plan(&self, done: bool) -> Value {
        let status = |first: bool| match (done, first) {
            (true, _) => "done",
            (false, true) => "in_progress",
            (false, false) => "todo",
        };
        let mut items = vec![
            json!({"title": "Look around the workspace", "status": status(true)}),
            json!({"title": "Write a notes file about the task", "status": status(false)}),
        ];
        if self.site.is_some() {
            items.push(json!({"title": "Read the demo shop's page in the browser", "status": status(false)}));
        }
        if self.handoff {
            items.push(json!({"title": "Have you sign in to the shop", "status": status(false)}));
        }
        if self.delegate {
            items.push(
                json!({"title": "Hand a small task to a sub-agent", "status": status(false)}),
            );
        }
        items.push(json!({"title": "Check the work and summarise", "status": status(false)}));
        json!(items)
    }
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
    if task.trim_start().starts_with(SUB_TASK) {
        return sub_agent_step(turn);
    }
    let short_task = shorten(&task, 60);
    let workspace = workspace_of(messages);
    let abilities = Abilities::of(request);
    let Some(stage) = abilities.stages().get(turn).copied() else {
        return Step::text("The demo is complete. Send another message to see it again.");
    };
    let site = abilities.site.clone().unwrap_or_default();
    match stage {
        Stage::Plan => call(
            "I'll start by planning the work.",
            "task_tracker",
            json!({"command": "plan", "task_list": abilities.plan(false),
                   "summary": "Plan the demo task", "security_risk": "LOW"}),
        ),
        Stage::List => call(
            "Let me see what is in the workspace.",
            "terminal",
            json!({"command": "ls -la", "summary": "List the workspace", "security_risk": "LOW"}),
        ),
        Stage::Greet => call(
            "A harmless command to show the terminal at work.",
            "terminal",
            json!({
                "command": "echo 'Hello from the Tandem demo model'",
                "summary": "Print a greeting",
                "security_risk": "LOW",
            }),
        ),
        Stage::WriteNotes => {
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
        Stage::ViewNotes => match created_path(after) {
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
        Stage::Approval => call(
            "This next command is harmless, but I mark it high risk so that you see an \
             approval: when Tandem asks before risky actions, it waits for you to approve it.",
            "terminal",
            json!({
                "command": "echo 'An approved command ran'",
                "summary": "A harmless command marked high risk, to show an approval",
                "security_risk": "HIGH",
            }),
        ),
        Stage::Browse => call(
            "Now the browser: a page Tandem serves itself, on this machine.",
            "browser_navigate",
            json!({"url": site, "summary": "Open the demo shop", "security_risk": "LOW"}),
        ),
        Stage::ReadPage => call(
            "Let me read the page.",
            "browser_get_content",
            json!({"extract_links": true, "summary": "Read the demo shop's page"}),
        ),
        Stage::Handoff => call(
            "Signing in is for you to do, not me: I'll hand you the browser.",
            "browser_request_handoff",
            json!({
                "reason": format!(
                    "Please sign in to the demo shop at {site}login with any name and password \
                     (nothing leaves this machine), then hand the browser back."
                ),
                "summary": "Ask the person to sign in",
                "security_risk": "LOW",
            }),
        ),
        Stage::OpenAccount => call(
            "Thanks! Let me look at the account page.",
            "browser_navigate",
            json!({"url": format!("{site}account"), "summary": "Open the account page", "security_risk": "LOW"}),
        ),
        Stage::ReadAccount => call(
            "",
            "browser_get_content",
            json!({"extract_links": false, "summary": "Read who is signed in"}),
        ),
        Stage::Delegate => call(
            "Last, I'll hand a small task to a sub-agent: it runs as a child conversation.",
            "task",
            json!({
                "description": "Count the workspace files",
                "prompt": format!("{SUB_TASK} Count the files in the workspace and report the number."),
                "subagent_type": "general-purpose",
                "summary": "Hand a small task to a sub-agent",
                "security_risk": "LOW",
            }),
        ),
        Stage::PlanDone => call(
            "Everything is done; updating the plan.",
            "task_tracker",
            json!({"command": "plan", "task_list": abilities.plan(true),
                   "summary": "Mark the plan done", "security_risk": "LOW"}),
        ),
        Stage::Finish => {
            let path = created_path(after)
                .or_else(|| written_name(after))
                .unwrap_or_else(|| "a notes file".to_owned());
            let mut did = vec![
                "planned the work".to_owned(),
                "listed the workspace".to_owned(),
                "ran commands (one after your approval, when asked)".to_owned(),
                format!("wrote {path} and checked it"),
            ];
            if abilities.site.is_some() {
                did.push("read a page in the browser".to_owned());
            }
            if abilities.handoff {
                did.push(match signed_in_as(after) {
                    Some(name) => format!("had you sign in (the shop says: signed in as {name})"),
                    None => "handed you the browser to sign in".to_owned(),
                });
            }
            if abilities.delegate {
                did.push("handed a task to a sub-agent".to_owned());
            }
            let last = did.pop().unwrap_or_default();
            call(
                "",
                "finish",
                json!({
                    "message": format!(
                        "Demo finished for \"{short_task}\": I {} and {last}. This was the \
                         scripted demo model; configure a real LLM to have the agent actually \
                         work on your task.",
                        did.join(", ")
                    ),
                    "summary": "Finish the demo",
                }),
            )
        }
    }
}

/// The sub-agent's tour: count the workspace's files, report.
fn sub_agent_step(turn: usize) -> Step {
    match turn {
        0 => call(
            "I'll count the files.",
            "terminal",
            json!({
                "command": "find . -maxdepth 1 -type f | wc -l",
                "summary": "Count the workspace files",
                "security_risk": "LOW",
            }),
        ),
        1 => call(
            "",
            "finish",
            json!({
                "message": "Counted the files in the workspace (the number is in the terminal's output above). I was a sub-agent of the demo.",
                "summary": "Report the count",
            }),
        ),
        _ => Step::text("The sub-task is done."),
    }
}

/// Who the demo shop says is signed in, from the page the browser read last.
fn signed_in_as(after_user: &[Value]) -> Option<String> {
    let text = after_user
        .iter()
        .rev()
        .filter(|m| role(m) == "tool")
        .map(text_of)
        .find(|t| t.contains("Signed in as "))?;
    let (_, rest) = text.split_once("Signed in as ")?;
    let name = rest.split_once('.').map_or(rest, |(n, _)| n).trim();
    (!name.is_empty()).then(|| shorten(name, 40))
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
        tour_with(system, &["terminal"], None, answer)
    }

    /// The tour with these tools, and the demo site at `site` when given.
    fn tour_with(
        system: &str,
        tool_names: &[&str],
        site: Option<&str>,
        answer: impl Fn(&str, &Value) -> String,
    ) -> (Vec<String>, Vec<Value>) {
        let responder = demo_responder();
        let tools: Vec<Value> = tool_names
            .iter()
            .map(|n| json!({"type": "function", "function": {"name": n}}))
            .collect();
        let mut messages = vec![
            json!({"role": "system", "content": system}),
            json!({"role": "user", "content": [{"type": "text", "text": "make notes"}]}),
        ];
        let (mut names, mut args) = (Vec::new(), Vec::new());
        for i in 0..20 {
            let mut request = json!({"messages": messages, "tools": tools});
            if let Some(site) = site {
                request[crate::site::SITE_FIELD] = json!(site);
            }
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

    const TOUR: [&str; 8] = [
        "task_tracker",
        "terminal",
        "terminal",
        "file_editor",
        "file_editor",
        "terminal",
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
            assert!(args[7]["message"].as_str().unwrap().contains(&created));
            assert_eq!(
                args[5]["security_risk"], "HIGH",
                "one step shows an approval"
            );
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
            args[7]["message"]
                .as_str()
                .unwrap()
                .contains("wrote tandem-demo-notes.md")
        );
    }

    const ALL_TOOLS: [&str; 6] = [
        "terminal",
        "file_editor",
        "task_tracker",
        "browser_navigate",
        "browser_get_content",
        "task",
    ];

    #[test]
    fn with_a_browser_a_person_and_sub_agents_the_tour_browses_hands_over_and_delegates() {
        let site = "http://127.0.0.1:4321/demo/";
        let mut tools = ALL_TOOLS.to_vec();
        tools.push("browser_request_handoff");
        let (names, args) = tour_with(&prompt("/w"), &tools, Some(site), |name, _| match name {
            "browser_get_content" => "# Your account\nSigned in as Ada.\nNo orders yet.".into(),
            _ => "ok".into(),
        });
        assert_eq!(
            names,
            [
                "task_tracker",
                "terminal",
                "terminal",
                "file_editor",
                "file_editor",
                "terminal",
                "browser_navigate",
                "browser_get_content",
                "browser_request_handoff",
                "browser_navigate",
                "browser_get_content",
                "task",
                "task_tracker",
                "finish"
            ]
        );
        assert_eq!(args[6]["url"], site);
        assert!(args[8]["reason"].as_str().unwrap().contains("sign in"));
        assert_eq!(args[9]["url"], "http://127.0.0.1:4321/demo/account");
        assert!(args[11]["prompt"].as_str().unwrap().starts_with(SUB_TASK));
        let done = args[13]["message"].as_str().unwrap();
        assert!(
            done.contains("signed in as Ada") && done.contains("sub-agent"),
            "{done}"
        );
        assert_eq!(args[0]["task_list"].as_array().unwrap().len(), 6);
    }

    #[test]
    fn headless_the_tour_browses_and_delegates_but_asks_for_no_takeover() {
        let (names, _) = tour_with(
            &prompt("/w"),
            &ALL_TOOLS,
            Some("http://127.0.0.1:1/demo/"),
            |_, _| "ok".into(),
        );
        assert!(names.contains(&"browser_navigate".to_owned()));
        assert!(names.contains(&"task".to_owned()));
        assert!(!names.contains(&"browser_request_handoff".to_owned()));
        // Without the site (a server that does not serve it), no browsing either.
        let (names, _) = tour_with(&prompt("/w"), &ALL_TOOLS, None, |_, _| "ok".into());
        assert!(
            !names.iter().any(|n| n.starts_with("browser_")),
            "{names:?}"
        );
    }

    #[test]
    fn the_sub_agent_counts_and_reports_without_a_tour_of_its_own() {
        let responder = demo_responder();
        let tools: Vec<Value> = ALL_TOOLS
            .iter()
            .map(|n| json!({"type": "function", "function": {"name": n}}))
            .collect();
        let task = format!("{SUB_TASK} Count the files in the workspace and report the number.");
        let request = json!({"messages": [{"role": "user", "content": task}], "tools": tools});
        let Step::Reply(first) = responder(&request, 0) else {
            panic!()
        };
        assert_eq!(first.tool_calls[0].name, "terminal");
        let request = json!({"messages": [
            {"role": "user", "content": task},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "3"},
        ], "tools": tools});
        let Step::Reply(second) = responder(&request, 1) else {
            panic!()
        };
        assert_eq!(second.tool_calls[0].name, "finish");
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
