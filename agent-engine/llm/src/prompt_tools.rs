//! Tool calling for models without native function calling: [`PromptToolCalling`] describes the
//! tools in the system prompt, rewrites earlier calls and results as text, sends no `tools`, and
//! reads calls back from the reply.
//!
//! The call form is the one OpenHands uses, so models tuned on OpenHands traces know it:
//!
//! ```text
//! <function=terminal>
//! <parameter=command>ls -la</parameter>
//! </function>
//! ```
//!
//! Parameters are typed from the tool's JSON schema (numbers, booleans, arrays and objects are
//! parsed from their text). A call that cannot be read (an unclosed tag, an unknown parameter,
//! bad JSON for an array or object) still becomes a tool call, whose arguments are not JSON and
//! start with [`MALFORMED_PREFIX`]: the agent's argument check fails on it, the model sees the
//! error as the call's result, and the history shows the model what was wrong. Nothing is
//! dropped and nothing panics.
//!
//! The wire clients cannot yet be asked for stop sequences per request; [`STOP_SEQUENCES`] is
//! what a client should send (`stop`) where the API allows. The parser accepts a final call whose
//! `</function>` was eaten by the stop sequence.

mod describe;
mod parse;

use futures::future::BoxFuture;
use serde_json::Value;
use tandem_protocol::{Content, LlmConfig, Message, MessageToolCall, Role};
use tokio_util::sync::CancellationToken;

use crate::{Llm, LlmRequest, LlmResponse, Result};

pub use describe::{render_call, tools_prompt};
pub use parse::{ParsedCall, ParsedReply, parse_reply};

/// What the arguments of an unreadable call start with; the reason follows on the same line,
/// then the call's text as the model wrote it.
pub const MALFORMED_PREFIX: &str = "MALFORMED TOOL CALL: ";

/// The stop sequences that end a reply after its call.
pub const STOP_SEQUENCES: [&str; 1] = ["</function>"];

/// What a tool result is introduced with when it goes back to the model as text.
pub const RESULT_HEADER: &str = "EXECUTION RESULT of";

/// Whether `config`'s model needs tools described in the prompt: `native_tool_calling: false`,
/// or the price table saying it has no function calling.
pub fn needs_prompt_tools(config: &LlmConfig) -> bool {
    !crate::prices::supports_native_tools(config)
}

/// Wraps a client so that tools travel in the prompt instead of the API's `tools` field.
/// Requests without tools pass through unchanged.
#[derive(Debug, Clone)]
pub struct PromptToolCalling<L> {
    inner: L,
}

impl<L: Llm> PromptToolCalling<L> {
    /// Wraps `inner`.
    pub fn new(inner: L) -> Self {
        Self { inner }
    }

    /// The wrapped client.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

/// The request `request` becomes: the tools described in the system prompt, earlier calls and
/// results as text, no `tools`.
pub fn convert_request(mut request: LlmRequest) -> LlmRequest {
    let tools = std::mem::take(&mut request.tools);
    if tools.is_empty() {
        return request;
    }
    let section = tools_prompt(&tools);
    let mut messages = convert_history(&request.messages);
    match messages.iter_mut().find(|m| m.role == Role::System) {
        Some(system) => system.content.push(Content::text(format!("\n\n{section}"))),
        None => messages.insert(0, Message::system(section)),
    }
    request.messages = messages;
    request
}

/// Earlier assistant calls rendered as text in their message, tool results as user messages.
fn convert_history(messages: &[Message]) -> Vec<Message> {
    let malformed: Vec<(&str, &str)> = messages
        .iter()
        .filter_map(|m| m.tool_calls.as_ref())
        .flatten()
        .filter_map(|c| {
            let rest = c.arguments.strip_prefix(MALFORMED_PREFIX)?;
            Some((
                c.id.as_str(),
                rest.split_once('\n').map_or(rest, |(r, _)| r),
            ))
        })
        .collect();
    messages
        .iter()
        .map(|message| match message.role {
            Role::Assistant if message.tool_calls.as_ref().is_some_and(|c| !c.is_empty()) => {
                let mut out = message.clone();
                let calls = out.tool_calls.take().unwrap_or_default();
                let mut text = message.text();
                for call in &calls {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&render_call(call));
                }
                out.content.retain(|c| c.as_text().is_none());
                out.content.insert(0, Content::text(text));
                out
            }
            Role::Tool => {
                let name = message.name.as_deref().unwrap_or("tool");
                let mut header = format!("{RESULT_HEADER} [{name}]:\n");
                let reason = message
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| malformed.iter().find(|(m, _)| *m == id))
                    .map(|(_, reason)| *reason);
                let mut out = Message::new(Role::User, Vec::new());
                let mut text = message.text();
                if let Some(reason) = reason {
                    text.push_str(&format!(
                        "\n(Your call could not be read: {reason}. Write it again in the documented form.)"
                    ));
                }
                header.push_str(&text);
                out.content.push(Content::text(header));
                out.content.extend(
                    message
                        .content
                        .iter()
                        .filter(|c| c.as_text().is_none())
                        .cloned(),
                );
                out
            }
            _ => message.clone(),
        })
        .collect()
}

/// Reads the calls out of `response`'s text: the text before the first call stays content,
/// the calls become `tool_calls` with fresh ids.
pub fn convert_response(mut response: LlmResponse, tools: &[Value]) -> LlmResponse {
    let text = response.message.text();
    let truncated = response.finish_reason.as_deref() == Some("length");
    let parsed = parse_reply(&text, tools, truncated);
    if parsed.calls.is_empty() {
        return response;
    }
    response.message.content.retain(|c| c.as_text().is_none());
    if !parsed.text.trim().is_empty() {
        response
            .message
            .content
            .insert(0, Content::text(parsed.text));
    }
    response.message.tool_calls = Some(
        parsed
            .calls
            .into_iter()
            .map(|call| MessageToolCall {
                id: format!("call_{}", uuid::Uuid::new_v4().simple()),
                responses_item_id: None,
                name: call.name,
                arguments: call.arguments,
                origin: "completion".to_owned(),
            })
            .collect(),
    );
    response.finish_reason = Some("tool_calls".to_owned());
    response
}

impl<L: Llm> Llm for PromptToolCalling<L> {
    fn config(&self) -> &LlmConfig {
        self.inner.config()
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        Box::pin(async move {
            if request.tools.is_empty() {
                return self.inner.completion(request, cancel).await;
            }
            let tools = request.tools.clone();
            let request = convert_request(request);
            let response = self.inner.completion(request, cancel).await?;
            Ok(convert_response(response, &tools))
        })
    }
}
