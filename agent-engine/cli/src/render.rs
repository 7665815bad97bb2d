//! One concise line per event, for `tandem run` and `tandem resume`.

use tandem_protocol::{Action, Event, Observation, SecurityRisk, Source};

/// At most `max` characters of the first non-empty line of `text`, with `…` when cut.
pub fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let more = text.lines().filter(|l| !l.trim().is_empty()).count() > 1;
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || more {
        out.push('…');
    }
    out
}

/// What an action does, in a few words.
pub fn describe_action(action: &Action) -> String {
    match action {
        Action::Terminal(t) if t.reset => "reset the shell".to_owned(),
        Action::Terminal(t) if t.is_input => format!("input {:?}", t.command),
        Action::Terminal(t) => format!("$ {}", first_line(&t.command, 100)),
        Action::FileEditor(f) => format!("{} {}", f.command, f.path),
        Action::TaskTracker(t) if t.command == "plan" => {
            format!("plan ({} tasks)", t.task_list.len())
        }
        Action::TaskTracker(t) => t.command.clone(),
        Action::Think(t) => first_line(&t.thought, 100),
        Action::Finish(f) => first_line(&f.message, 100),
        Action::BrowserNavigate(b) => format!("open {}", first_line(&b.url, 100)),
        Action::BrowserClick(b) => format!("click [{}]", b.index),
        // Not the text: it may be a password.
        Action::BrowserType(b) => format!("type into [{}]", b.index),
        Action::BrowserScroll(b) => format!("scroll {}", b.direction),
        Action::BrowserSwitchTab(b) => format!("tab {}", b.tab_id),
        Action::BrowserCloseTab(b) => format!("close tab {}", b.tab_id),
        Action::BrowserRequestHandoff(b) => {
            format!("needs a person: {}", first_line(&b.reason, 100))
        }
        Action::Glob(g) => match &g.path {
            Some(p) => format!("find {} in {p}", g.pattern),
            None => format!("find {}", g.pattern),
        },
        Action::Grep(g) => {
            let mut out = format!("search /{}/", first_line(&g.pattern, 80));
            if let Some(i) = &g.include {
                out.push_str(&format!(" in {i}"));
            }
            if let Some(p) = &g.path {
                out.push_str(&format!(" under {p}"));
            }
            out
        }
        Action::Task(t) => {
            let what = t.description.as_deref().unwrap_or(&t.prompt);
            match &t.resume {
                Some(id) => format!(
                    "resume {} sub-agent {id}: {}",
                    t.subagent_type,
                    first_line(what, 80)
                ),
                None => format!("{} sub-agent: {}", t.subagent_type, first_line(what, 80)),
            }
        }
        Action::Mcp(m) => first_line(&serde_json::Value::Object(m.data.clone()).to_string(), 100),
        Action::Unknown(v) => first_line(&v.to_string(), 100),
        // The tool name already says what the rest do.
        _ => String::new(),
    }
}

/// The line for `event`, or `None` for events not worth a line (stats, the system prompt).
pub fn line(event: &Event) -> Option<String> {
    Some(match event {
        Event::Message(m) => {
            let who = if m.base.source == Source::User {
                "user"
            } else {
                "agent"
            };
            format!("» {who}: {}", first_line(&m.llm_message.text(), 160))
        }
        Event::Action(a) => match &a.action {
            Some(action) => {
                let risk = match a.security_risk {
                    SecurityRisk::Unknown => String::new(),
                    r => format!("  [risk {}]", r.as_str()),
                };
                format!("▶ {}: {}{risk}", a.tool_name, describe_action(action))
            }
            None => format!("▶ {} (invalid call)", a.tool_name),
        },
        Event::Observation(o) => {
            let text = o
                .observation
                .content()
                .iter()
                .filter_map(|c| c.as_text())
                .collect::<Vec<_>>()
                .join("\n");
            match &o.observation {
                Observation::Terminal(t) => {
                    let code = t
                        .exit_code
                        .map_or("running".to_owned(), |c| format!("exit {c}"));
                    // An action the person edited starts with a note saying what ran: the line
                    // shows it ran edited, then the output's first line.
                    let (edited, text) = match tandem_sdk::split_edit_note(&text) {
                        Some((_, output)) => (" (edited)", output),
                        None => ("", text.as_str()),
                    };
                    let output = text.split("\n[The command").next().unwrap_or("");
                    format!("  ↳ {code}{edited}: {}", first_line(output, 120))
                }
                Observation::Finish(_) => return None,
                obs => {
                    let mark = if obs.is_error() { "✗" } else { "↳" };
                    format!("  {mark} {}", first_line(&text, 140))
                }
            }
        }
        Event::AgentError(e) => format!("  ✗ {}", first_line(&e.error, 160)),
        Event::UserReject(r) => format!("  ⊘ rejected: {}", first_line(&r.rejection_reason, 120)),
        Event::ConversationError(e) => format!("✗ {}: {}", e.code, first_line(&e.detail, 200)),
        Event::Pause(_) => "‖ paused".to_owned(),
        Event::Interrupt(_) => "‖ interrupted".to_owned(),
        Event::Condensation(c) => {
            format!("· condensed {} earlier events", c.forgotten_event_ids.len())
        }
        Event::StateUpdate(u) if u.key == tandem_protocol::Budget::REACHED_KEY => {
            let r = &u.value;
            match r["limit"].as_str() {
                Some("max_tokens") => format!(
                    "· paused at its budget: {} tokens of {}",
                    r["spent_tokens"], r["max_tokens"]
                ),
                Some(_) => format!(
                    "· paused at its budget: ${:.4} of ${:.4}",
                    r["spent_cost"].as_f64().unwrap_or(0.0),
                    r["max_cost"].as_f64().unwrap_or(0.0)
                ),
                None => return None,
            }
        }
        Event::StateUpdate(u) if u.key == tandem_sdk::QUEUE_KEY => {
            match u.value["ahead"].as_u64() {
                Some(n) => format!("· queued: {n} run(s) ahead"),
                None => return None,
            }
        }
        Event::StateUpdate(u) if u.key == "execution_status" => {
            let s = u.value.as_str().unwrap_or("");
            match s {
                "finished" | "error" | "stuck" | "waiting_for_confirmation" => {
                    format!("· status: {s}")
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_cuts_and_marks() {
        assert_eq!(first_line("\n  hello\nworld", 10), "  hello…");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("ok", 3), "ok");
    }
}
