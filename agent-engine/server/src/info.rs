//! What the API reports about a conversation: `ConversationInfo` for REST, the `full_state`
//! value for socket frames, and the agent echoed with its credentials hidden.

use serde_json::{Map, Value, json};
use tandem_protocol::{ConversationInfo, ConversationState, Event, RuntimeInfo};
use tandem_sdk::ConversationMeta;

/// Credential fields of an LLM configuration.
const CREDENTIALS: &[&str] = &[
    "api_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
];

/// How credentials are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redact {
    /// `null` (REST replies).
    Null,
    /// `"**********"` where a value is set (socket frames), absent otherwise.
    Stars,
}

/// The agent JSON with every LLM credential (the agent's, the condenser's, routers') hidden.
pub fn redact_agent(agent: &Value, how: Redact, has_key: bool) -> Value {
    let mut v = agent.clone();
    redact(&mut v, how, has_key);
    v
}

fn redact(value: &mut Value, how: Redact, has_key: bool) {
    match value {
        Value::Object(map) => {
            let is_llm = map.contains_key("model")
                && (map.contains_key("usage_id")
                    || map.contains_key("base_url")
                    || map.contains_key("num_retries"));
            for field in CREDENTIALS {
                let set = map.get(*field).is_some_and(|v| !v.is_null());
                match how {
                    Redact::Null => {
                        if map.contains_key(*field) || (is_llm && *field == "api_key") {
                            map.insert((*field).to_owned(), Value::Null);
                        }
                    }
                    Redact::Stars => {
                        if set || (is_llm && *field == "api_key" && has_key) {
                            map.insert((*field).to_owned(), Value::from("**********"));
                        } else {
                            map.remove(*field);
                        }
                    }
                }
            }
            if let Some(servers) = map.get_mut("mcp_config") {
                hide_mcp_secrets(servers);
            }
            map.values_mut().for_each(|v| redact(v, how, has_key));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, how, has_key)),
        _ => {}
    }
}

/// An MCP config's credentials, `"**********"` in both REST replies and frames (upstream shows
/// its secret strings so, and its client reads them back as strings): every `env` and
/// `headers` value, and `auth` (a bare token, or the secret fields of a strategy).
pub(crate) fn hide_mcp_secrets(config: &mut Value) {
    let servers = match config.get_mut("mcpServers") {
        Some(s) => s,
        None => config,
    };
    let Some(servers) = servers.as_object_mut() else {
        return;
    };
    let stars = || Value::from("**********");
    for server in servers.values_mut().filter_map(Value::as_object_mut) {
        for field in ["env", "headers"] {
            if let Some(Value::Object(values)) = server.get_mut(field) {
                values.values_mut().for_each(|v| *v = stars());
            }
        }
        match server.get_mut("auth") {
            Some(Value::String(token)) if token != "oauth" => *token = "**********".into(),
            Some(Value::Object(auth)) => {
                for (k, v) in auth.iter_mut() {
                    if matches!(k.as_str(), "value" | "password" | "token" | "state")
                        && !v.is_null()
                    {
                        *v = stars();
                    }
                    if k == "headers"
                        && let Some(h) = v.as_object_mut()
                    {
                        h.values_mut().for_each(|v| *v = stars());
                    }
                }
            }
            _ => {}
        }
    }
}

fn dashed(id: &str) -> String {
    uuid::Uuid::parse_str(id)
        .map(|u| u.hyphenated().to_string())
        .unwrap_or_else(|_| id.to_owned())
}

fn iso(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// `ConversationInfo` from the state and catalog entry (`tags`, set through PATCH, overrides
/// the state's tags).
pub fn conversation_info(
    state: &ConversationState,
    meta: &ConversationMeta,
    tags: Option<std::collections::BTreeMap<String, String>>,
    has_key: bool,
) -> ConversationInfo {
    let extra = |k: &str| meta.extra.get(k).cloned().filter(|v| !v.is_null());
    let agent = serde_json::to_value(&state.agent).unwrap_or(Value::Null);
    let obj = |v: Option<Value>| match v {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let tags = tags.unwrap_or_else(|| state.tags.clone());
    ConversationInfo {
        id: dashed(&state.id),
        workspace: state.workspace.clone(),
        persistence_dir: state.persistence_dir.clone(),
        max_iterations: state.max_iterations,
        stuck_detection: state.stuck_detection,
        execution_status: state.execution_status,
        confirmation_policy: state.confirmation_policy.clone(),
        security_analyzer: state.security_analyzer.clone(),
        activated_knowledge_skills: state.activated_knowledge_skills.clone(),
        invoked_skills: state
            .extra
            .get("invoked_skills")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        blocked_actions: obj(state.extra.get("blocked_actions").cloned()),
        blocked_messages: obj(state.extra.get("blocked_messages").cloned()),
        last_user_message_id: state.last_user_message_id.clone(),
        leaf_event_id: state.leaf_event_id.clone(),
        stats: state.stats.clone(),
        secret_registry: if state.secret_registry.is_null() {
            json!({"secret_sources": {}})
        } else {
            state.secret_registry.clone()
        },
        agent_state: state
            .extra
            .get("agent_state")
            .cloned()
            .unwrap_or_else(|| json!({})),
        hook_config: extra("hook_config"),
        title: meta.title.clone(),
        metrics: meta.metrics.clone(),
        created_at: iso(&meta.created_at),
        updated_at: iso(&meta.updated_at),
        forked_from_conversation_id: extra("forked_from_conversation_id")
            .and_then(|v| v.as_str().map(str::to_owned)),
        forked_from_event_id: extra("forked_from_event_id")
            .and_then(|v| v.as_str().map(str::to_owned)),
        parent_conversation_id: extra("parent_conversation_id")
            .and_then(|v| v.as_str().map(str::to_owned)),
        sub_conversation_ids: Vec::new(),
        tags,
        current_model_id: None,
        available_models: Vec::new(),
        supports_runtime_model_switch: false,
        launched_agent_profile: extra("launched_agent_profile"),
        agent: redact_agent(&agent, Redact::Null, has_key),
        client_tools: extra("client_tools")
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default(),
        tool_module_qualnames: obj(extra("tool_module_qualnames")),
        runtime_info: Some(RuntimeInfo {
            runtime_status: "available".into(),
            can_resume: true,
            runtime_error: None,
        }),
        queued_ahead: state
            .extra
            .get(tandem_sdk::QUEUE_KEY)
            .and_then(|q| q.get("ahead"))
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
    }
}

/// The `full_state` value: the whole state as upstream's `ConversationState` JSON carries it.
pub fn full_state_value(state: &ConversationState, has_key: bool) -> Value {
    let mut v = serde_json::to_value(state).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        if let Some(agent) = map.get_mut("agent") {
            *agent = redact_agent(agent, Redact::Stars, has_key);
        }
        let defaults = [
            ("activated_path_rules", json!([])),
            ("invoked_skills", json!([])),
            ("blocked_actions", json!({})),
            ("blocked_messages", json!({})),
            ("head_is_empty", json!(false)),
            ("agent_state", json!({})),
            ("secret_registry", json!({"secret_sources": {}})),
        ];
        for (k, d) in defaults {
            if map.get(k).is_none_or(Value::is_null) {
                map.insert(k.to_owned(), d);
            }
        }
        map.insert("id".into(), Value::from(dashed(&state.id)));
    }
    v
}

/// A transient `ConversationStateUpdateEvent` with `key: "full_state"`.
pub fn full_state_event(state: &ConversationState, has_key: bool) -> Event {
    Event::state_update("full_state", full_state_value(state, has_key), None)
}

/// The agent's final answer: the last `finish` message or agent text, whichever is later.
pub fn final_response(events: &[Event]) -> String {
    for e in events.iter().rev() {
        match e {
            Event::Action(a) => {
                if let Some(tandem_protocol::Action::Finish(f)) = &a.action {
                    return f.message.clone();
                }
            }
            Event::Message(m) if m.base.source == tandem_protocol::Source::Agent => {
                let text = m.llm_message.text();
                if !text.trim().is_empty() {
                    return text;
                }
            }
            _ => {}
        }
    }
    String::new()
}
