//! The agent's side of a step: the LLM's view of the history, the tool schemas it is offered,
//! and turning its reply into events.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value, json};
use tandem_llm::LlmResponse;
use tandem_protocol::{
    ActionEvent, AgentErrorEvent, Content, ErrorClassification, Event, EventBase, Extra, Message,
    MessageToolCall, Role, SecurityRisk, Source, tool_io,
};

use crate::condenser::{ViewItem, view_items};
use crate::error::ToolCallError;
use crate::security::RuleAnalyzer;
use crate::tool::{Tool, ToolRegistry};

/// Text added to the schema of every tool: a short summary of the call, shown in timelines.
const SUMMARY_DESCRIPTION: &str = "A short summary (about 10 words) of what this call does, shown to the person following along. Example: 'Run the unit tests of the parser'";
/// Text added to the schema of tools that change things: the model's own risk rating.
const RISK_DESCRIPTION: &str = "Your assessment of this call's risk: LOW (read-only, or easily undone), MEDIUM (changes files or state inside the workspace), HIGH (destructive, privileged, or reaching outside the workspace), UNKNOWN if you cannot tell.";

/// The tools in OpenAI function format, with `summary` added to every schema and
/// `security_risk` to those that ask for it when `ask_risk` is set.
pub fn tool_schemas(tools: &ToolRegistry, ask_risk: bool) -> Vec<Value> {
    tools
        .iter()
        .map(|t| tool_schema(t.as_ref(), ask_risk))
        .collect()
}

fn tool_schema(tool: &dyn Tool, ask_risk: bool) -> Value {
    let def = tool.definition();
    let mut params = def.parameters.clone();
    if let Some(obj) = params.as_object_mut() {
        let props = obj
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(props) = props.as_object_mut() {
            let mut extra = Map::new();
            if ask_risk && def.asks_security_risk {
                extra.insert(
                    "security_risk".into(),
                    json!({"type": "string", "description": RISK_DESCRIPTION, "enum": ["UNKNOWN", "LOW", "MEDIUM", "HIGH"]}),
                );
            }
            extra.insert(
                "summary".into(),
                json!({"type": "string", "description": SUMMARY_DESCRIPTION}),
            );
            // Our additions first, as upstream orders them; the tool's own keep their order.
            extra.extend(std::mem::take(props));
            *props = extra;
        }
    }
    json!({
        "type": "function",
        "function": {"name": def.name, "description": def.description, "parameters": params},
    })
}

/// The tools as `SystemPromptEvent.tools` describes them (upstream `ToolDefinition` JSON).
pub fn tool_definitions_json(tools: &ToolRegistry) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            let d = t.definition();
            let a = d.annotations;
            let mut entry = json!({
                "description": d.description,
                "action_type": d.action_type,
                "observation_type": d.observation_type,
                "annotations": {
                    "title": d.name,
                    "readOnlyHint": a.read_only,
                    "destructiveHint": a.destructive,
                    "idempotentHint": a.idempotent,
                    "openWorldHint": a.open_world,
                },
                "kind": tool_class_name(&d.name),
                "title": d.name,
            });
            if let (Some(fields), Some(obj)) = (t.wire_definition(), entry.as_object_mut()) {
                obj.extend(fields);
            }
            entry
        })
        .collect()
}

/// `file_editor` → `FileEditorTool`.
fn tool_class_name(name: &str) -> String {
    let mut out: String = name
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    out.push_str("Tool");
    out
}

/// The history as the LLM sees it: [`view_items`] (condensations applied, the one definition
/// the condenser measures too) as messages, each response's tool calls in one assistant
/// message, each answered by a tool message. Calls left unanswered (there should be none) are
/// dropped so the request stays valid.
pub fn llm_view(events: &[Event]) -> Vec<Message> {
    let mut messages: Vec<Message> = Vec::new();
    let mut last_response: Option<&str> = None;
    for item in view_items(events) {
        let event = match item {
            ViewItem::Summary { text, .. } => {
                messages.push(summary_message(text));
                continue;
            }
            ViewItem::Event(event) => event,
        };
        match event {
            Event::SystemPrompt(s) => {
                let mut content = vec![Content::Text(s.system_prompt.clone())];
                if let Some(d) = &s.dynamic_context {
                    content.push(Content::Text(d.clone()));
                }
                messages.push(Message::new(Role::System, content));
                last_response = None;
            }
            Event::Message(m) => {
                let mut msg = m.llm_message.clone();
                msg.content.extend(m.extended_content.iter().cloned());
                messages.push(msg);
                last_response = None;
            }
            Event::Action(a) => {
                let same_response = last_response == Some(a.llm_response_id.as_str())
                    && messages
                        .last()
                        .is_some_and(|m| m.role == Role::Assistant && m.tool_calls.is_some());
                if same_response {
                    if let Some(calls) = messages.last_mut().and_then(|m| m.tool_calls.as_mut()) {
                        calls.push(a.tool_call.clone());
                    }
                } else {
                    // The first call of a response carries what the response shared: its
                    // text, reasoning and the Responses reasoning item that preceded the calls.
                    let mut msg = Message::new(Role::Assistant, a.thought.clone());
                    msg.tool_calls = Some(vec![a.tool_call.clone()]);
                    msg.reasoning_content.clone_from(&a.reasoning_content);
                    msg.responses_reasoning_item
                        .clone_from(&a.responses_reasoning_item);
                    msg.thinking_blocks = a
                        .thinking_blocks
                        .iter()
                        .filter_map(|b| serde_json::from_value(b.clone()).ok())
                        .collect();
                    messages.push(msg);
                }
                last_response = Some(&a.llm_response_id);
            }
            Event::Observation(o) => {
                let mut content = o.observation.content();
                content.extend(o.extended_content.iter().cloned());
                messages.push(Message::tool(&o.tool_call_id, &o.tool_name, content));
            }
            Event::AgentError(e) => {
                messages.push(Message::tool(
                    &e.tool_call_id,
                    &e.tool_name,
                    vec![Content::text(&e.error)],
                ));
            }
            Event::UserReject(r) => {
                let text = format!("Action rejected by the user: {}", r.rejection_reason);
                messages.push(Message::tool(
                    &r.tool_call_id,
                    &r.tool_name,
                    vec![Content::text(text)],
                ));
            }
            _ => {}
        }
    }
    drop_unanswered_calls(messages)
}

/// How a condensation summary appears to the model: as context from the user side.
fn summary_message(text: &str) -> Message {
    Message::user(format!(
        "<SUMMARY OF EARLIER WORK>\n{text}\n</SUMMARY OF EARLIER WORK>"
    ))
}

fn drop_unanswered_calls(mut messages: Vec<Message>) -> Vec<Message> {
    let answered: HashSet<String> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    let called: HashSet<String> = messages
        .iter()
        .filter_map(|m| m.tool_calls.as_ref())
        .flatten()
        .map(|c| c.id.clone())
        .collect();
    messages.retain_mut(|m| {
        if m.role == Role::Tool {
            return m
                .tool_call_id
                .as_ref()
                .is_some_and(|id| called.contains(id));
        }
        if let Some(calls) = m.tool_calls.as_mut() {
            calls.retain(|c| answered.contains(&c.id));
            if calls.is_empty() {
                m.tool_calls = None;
                return !m.content.is_empty();
            }
        }
        true
    });
    messages
}

/// An action the model asked for, and the error that stops it from running, if any.
#[derive(Debug)]
pub struct ProposedAction {
    /// The event to record (its `action` is absent when the call was not valid).
    pub event: ActionEvent,
    /// Why it cannot run; the model sees this as the tool's result.
    pub error: Option<ToolCallError>,
}

/// Turns the model's tool calls into action events: arguments parsed and validated by the
/// tool, `security_risk` taken from the model and raised by the rule analyzer.
pub fn propose_actions(
    response: &LlmResponse,
    tools: &ToolRegistry,
    analyzer: &RuleAnalyzer,
    workspace: &Path,
    parent_id: Option<String>,
) -> Vec<ProposedAction> {
    let calls = response.message.tool_calls.clone().unwrap_or_default();
    let thought: Vec<Content> = response
        .message
        .content
        .iter()
        .filter(|c| c.as_text().is_some_and(|t| !t.trim().is_empty()))
        .cloned()
        .collect();
    let thinking_blocks: Vec<Value> = response
        .message
        .thinking_blocks
        .iter()
        .filter_map(|b| serde_json::to_value(b).ok())
        .collect();
    let mut parent = parent_id;
    calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            let proposed = propose_one(call, tools, analyzer, workspace, parent.clone());
            let mut proposed = proposed;
            if i == 0 {
                proposed.event.thought = thought.clone();
                proposed
                    .event
                    .reasoning_content
                    .clone_from(&response.message.reasoning_content);
                proposed.event.thinking_blocks = thinking_blocks.clone();
                proposed
                    .event
                    .responses_reasoning_item
                    .clone_from(&response.message.responses_reasoning_item);
            }
            proposed.event.llm_response_id.clone_from(&response.id);
            parent = Some(proposed.event.base.id.clone());
            proposed
        })
        .collect()
}

fn propose_one(
    call: MessageToolCall,
    tools: &ToolRegistry,
    analyzer: &RuleAnalyzer,
    workspace: &Path,
    parent_id: Option<String>,
) -> ProposedAction {
    let mut event = ActionEvent {
        base: EventBase::new(Source::Agent, parent_id),
        thought: Vec::new(),
        reasoning_content: None,
        thinking_blocks: Vec::new(),
        responses_reasoning_item: None,
        action: None,
        tool_name: call.name.clone(),
        tool_call_id: call.id.clone(),
        tool_call: call.clone(),
        llm_response_id: String::new(),
        security_risk: SecurityRisk::Unknown,
        critic_result: None,
        summary: None,
        extra: Extra::new(),
    };
    let Some(tool) = tools.get(&call.name) else {
        let error = ToolCallError::NotFound {
            name: call.name.clone(),
            available: tools.names().into_iter().map(str::to_owned).collect(),
        };
        return ProposedAction {
            event,
            error: Some(error),
        };
    };
    let raw = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    match parse_call(tool.as_ref(), &call.name, raw) {
        Ok(parsed) => {
            event.summary = Some(
                parsed
                    .summary
                    .unwrap_or_else(|| format!("{}: {}", call.name, raw)),
            );
            let rule_risk = analyzer.assess(&parsed.action, workspace);
            event.security_risk = parsed.llm_risk.max(rule_risk);
            event.action = Some(parsed.action);
            ProposedAction { event, error: None }
        }
        Err(error) => ProposedAction {
            event,
            error: Some(error),
        },
    }
}

/// A tool call's arguments, validated by its tool.
struct ParsedCall {
    action: tandem_protocol::Action,
    /// The risk the caller claimed (`security_risk`), `Unknown` when absent.
    llm_risk: SecurityRisk,
    /// The caller's `summary`, when given.
    summary: Option<String>,
}

/// Parses `raw` (a JSON object) as `tool`'s arguments: `security_risk` and `summary` are taken
/// out, the rest goes to the tool's parser. The error names the tool and, through the parser,
/// the field at fault.
fn parse_call(
    tool: &dyn Tool,
    name: &str,
    raw: &str,
) -> std::result::Result<ParsedCall, ToolCallError> {
    let mut args = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(o)) => o,
        Ok(other) => {
            return Err(ToolCallError::NotAnObject {
                tool: name.to_owned(),
                got: tool_io::type_name(&other),
            });
        }
        Err(source) => {
            return Err(ToolCallError::Unparseable {
                tool: name.to_owned(),
                source,
            });
        }
    };
    let llm_risk = args
        .remove("security_risk")
        .and_then(|v| v.as_str().map(SecurityRisk::parse))
        .unwrap_or_default();
    let summary = args
        .remove("summary")
        .and_then(|v| v.as_str().map(str::to_owned));
    let action =
        tool.parse_action(Value::Object(args))
            .map_err(|source| ToolCallError::Invalid {
                tool: name.to_owned(),
                source,
            })?;
    Ok(ParsedCall {
        action,
        llm_risk,
        summary,
    })
}

/// The action a person approved in place of `original`: `arguments` validated by the tool
/// exactly as a model's call is, and rated again by the rule analyzer alone (the model's
/// rating was of what it proposed, not of this). The event keeps the original's ids, so its
/// observation answers the model's tool call. The error names the field at fault.
pub fn edit_action(
    original: &ActionEvent,
    arguments: &Value,
    tools: &ToolRegistry,
    analyzer: &RuleAnalyzer,
    workspace: &Path,
) -> std::result::Result<ActionEvent, ToolCallError> {
    let Some(tool) = tools.get(&original.tool_name) else {
        return Err(ToolCallError::NotAvailable(original.tool_name.clone()));
    };
    let raw = arguments.to_string();
    let parsed = parse_call(tool.as_ref(), &original.tool_name, &raw)?;
    let mut edited = original.clone();
    edited.security_risk = analyzer.assess(&parsed.action, workspace);
    edited.action = Some(parsed.action);
    edited.tool_call.arguments = raw;
    Ok(edited)
}

/// How an edited action is named in the note its observation carries: the command for the
/// terminal, the tool and its arguments otherwise, in full so the model knows exactly what ran.
pub fn edited_headline(action: &ActionEvent) -> String {
    match &action.action {
        Some(tandem_protocol::Action::Terminal(t)) => format!("$ {}", t.command),
        _ => format!("{} {}", action.tool_name, action.tool_call.arguments),
    }
}

/// The error event the model sees for an action that could not run.
pub fn agent_error(
    action: &ActionEvent,
    error: String,
    classification: ErrorClassification,
) -> AgentErrorEvent {
    AgentErrorEvent {
        base: EventBase::new(Source::Agent, Some(action.base.id.clone())),
        tool_name: action.tool_name.clone(),
        tool_call_id: action.tool_call_id.clone(),
        error,
        classification: Some(classification),
        extra: Extra::new(),
    }
}
