//! What a request asks: the user's content (text and images) and the system text, from chat
//! messages or a Responses `input`.

use serde_json::Value;
use tandem_protocol::{ChatMessage, Content, ImageContent, ResponseInput, ResponseInputItem};

use super::GatewayError;

/// The turn a request asks for.
#[derive(Debug)]
pub struct Ask {
    /// The user message's content.
    pub content: Vec<Content>,
    /// Text appended to the agent's system prompt of a new conversation.
    pub system: Option<String>,
    /// Whether a new conversation is titled by the LLM (off unless the request asks).
    pub autotitle: bool,
}

fn image(url: &str) -> Content {
    Content::Image(ImageContent {
        cache_prompt: false,
        image_urls: vec![url.to_owned()],
        extra: Default::default(),
    })
}

/// The url of an `image_url` / `input_image` part: a string or `{"url": ...}`.
fn image_url(v: Option<&Value>) -> Option<&str> {
    match v? {
        Value::String(s) => Some(s.as_str()),
        other => other.get("url").and_then(Value::as_str),
    }
    .filter(|s| !s.trim().is_empty())
}

/// Text and images of a message's content (a string, a list of parts, or null); `param`
/// names the content in errors.
fn parts(content: &Value, param: &str) -> Result<Vec<Content>, GatewayError> {
    match content {
        Value::Null => Ok(Vec::new()),
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![Content::text(s.clone())]),
        Value::Array(list) => {
            let mut out = Vec::new();
            for (i, p) in list.iter().enumerate() {
                let at = format!("{param}[{i}]");
                let kind = p.get("type").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "text" | "input_text" | "output_text" => {
                        if let Some(t) = p.get("text").and_then(Value::as_str)
                            && !t.is_empty()
                        {
                            out.push(Content::text(t.to_owned()));
                        }
                    }
                    "image_url" | "input_image" => {
                        let url = image_url(p.get("image_url")).ok_or_else(|| {
                            GatewayError::invalid(
                                format!("The {kind} part has no url."),
                                Some(&format!("{at}.image_url")),
                            )
                        })?;
                        out.push(image(url));
                    }
                    other => {
                        return Err(GatewayError::invalid(
                            format!(
                                "Unsupported content part type `{other}`; the gateway takes text and image parts."
                            ),
                            Some(&format!("{at}.type")),
                        ));
                    }
                }
            }
            Ok(out)
        }
        _ => Err(GatewayError::invalid(
            "A message's content must be a string or a list of parts.",
            Some(param),
        )),
    }
}

fn text(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(Content::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_system(role: &str) -> bool {
    role == "system" || role == "developer"
}

fn join(texts: Vec<String>) -> Option<String> {
    let texts: Vec<String> = texts.into_iter().filter(|t| !t.trim().is_empty()).collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// A chat request's turn: the latest user message, and the system / developer messages'
/// text.
pub fn from_chat(messages: &[ChatMessage]) -> Result<Ask, GatewayError> {
    let mut system = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if is_system(&m.role) {
            system.push(text(&parts(&m.content, &format!("messages[{i}].content"))?));
        }
    }
    let Some(i) = messages.iter().rposition(|m| m.role == "user") else {
        return Err(GatewayError::invalid(
            "The request has no user message; the latest user message is the agent's task.",
            Some("messages"),
        ));
    };
    let content = parts(&messages[i].content, &format!("messages[{i}].content"))?;
    if content.is_empty() {
        return Err(GatewayError::invalid(
            "The latest user message has no text or image content.",
            Some(&format!("messages[{i}].content")),
        ));
    }
    Ok(Ask {
        content,
        system: join(system),
        autotitle: false,
    })
}

/// A Responses request's turn: the text, or the user message (several non-system messages
/// are passed on as `<message role="...">` blocks); `instructions` and system messages as the
/// system text.
pub fn from_responses(
    input: &ResponseInput,
    instructions: Option<&str>,
) -> Result<Ask, GatewayError> {
    let mut system: Vec<String> = instructions.map(str::to_owned).into_iter().collect();
    let content = match input {
        ResponseInput::Text(t) if t.trim().is_empty() => {
            return Err(GatewayError::invalid("The input is empty.", Some("input")));
        }
        ResponseInput::Text(t) => vec![Content::text(t.clone())],
        ResponseInput::Items(items) => {
            let mut turns: Vec<(&ResponseInputItem, Vec<Content>)> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if let Some(kind) = item.kind.as_deref()
                    && kind != "message"
                {
                    return Err(GatewayError::invalid(
                        format!(
                            "Unsupported input item type `{kind}`; the gateway takes messages."
                        ),
                        Some(&format!("input[{i}].type")),
                    ));
                }
                let content = parts(&item.content, &format!("input[{i}].content"))?;
                match item.role.as_str() {
                    r if is_system(r) => system.push(text(&content)),
                    "user" | "assistant" => turns.push((item, content)),
                    other => {
                        return Err(GatewayError::invalid(
                            format!(
                                "Unsupported role `{other}`; input messages are user, assistant, system or developer."
                            ),
                            Some(&format!("input[{i}].role")),
                        ));
                    }
                }
            }
            if !turns.iter().any(|(item, _)| item.role == "user") {
                return Err(GatewayError::invalid(
                    "The input has no user message.",
                    Some("input"),
                ));
            }
            match turns.as_slice() {
                [(_, only)] => only.clone(),
                _ => {
                    let mut out = Vec::new();
                    for (item, content) in turns {
                        out.push(Content::text(format!("<message role=\"{}\">", item.role)));
                        out.extend(content);
                        out.push(Content::text("</message>".to_owned()));
                    }
                    out
                }
            }
        }
    };
    if content.is_empty() {
        return Err(GatewayError::invalid(
            "The user message has no text or image content.",
            Some("input"),
        ));
    }
    Ok(Ask {
        content,
        system: join(system),
        autotitle: false,
    })
}
