//! Messages exchanged with the LLM, in the shape the upstream `Message` model serialises to.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Extra;
use crate::kind::tagged_enum;

/// Who speaks a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// The person (or a client acting for them).
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering one tool call.
    Tool,
}

/// Plain text content. `cache_prompt` marks a prompt-caching breakpoint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct TextContent {
    /// Whether a provider-side cache breakpoint goes after this part.
    #[serde(default)]
    pub cache_prompt: bool,
    /// The text.
    pub text: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl TextContent {
    /// Text content without a cache breakpoint.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            cache_prompt: false,
            text: text.into(),
            extra: Extra::new(),
        }
    }
}

/// Image content given as URLs (`data:` URLs for inline images).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct ImageContent {
    /// Whether a provider-side cache breakpoint goes after this part.
    #[serde(default)]
    pub cache_prompt: bool,
    /// The image URLs.
    pub image_urls: Vec<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

tagged_enum! {
    /// One part of a message's content, discriminated by `type`.
    pub enum Content tag "type" {
        /// Text.
        Text(TextContent) = "text",
        /// Images.
        Image(ImageContent) = "image",
    }
}

impl Content {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The text of a text part, `None` for other parts.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// A reasoning block a model produced (Anthropic extended thinking), kept so it can be sent
/// back across tool turns. Discriminated by `type`: `thinking` or `redacted_thinking`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingBlock {
    /// Readable thinking, with the provider's signature.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// Provider signature that must be echoed back unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Thinking the provider encrypted.
    RedactedThinking {
        /// Opaque data to echo back.
        data: String,
    },
}

/// A tool call the model made, as carried by `ActionEvent.tool_call` and assistant messages.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct MessageToolCall {
    /// The provider's id for the call; the tool result must name it.
    pub id: String,
    /// Responses API item id, when the call came from that API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses_item_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them: a JSON string, possibly malformed.
    pub arguments: String,
    /// Which API produced the call (`completion` or `responses`).
    pub origin: String,
}

/// A message in the LLM conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// Content parts.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Tool calls (assistant messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<MessageToolCall>>,
    /// The call this message answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's name (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Reasoning text some OpenAI-compatible servers return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Thinking blocks to send back across tool turns.
    #[serde(default)]
    pub thinking_blocks: Vec<ThinkingBlock>,
    /// Responses API reasoning item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses_reasoning_item: Option<serde_json::Value>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl Message {
    /// A message with the given role and content and nothing else.
    pub fn new(role: Role, content: Vec<Content>) -> Self {
        Self {
            role,
            content,
            tool_calls: None,
            tool_call_id: None,
            name: None,
            reasoning_content: None,
            thinking_blocks: Vec::new(),
            responses_reasoning_item: None,
            extra: Extra::new(),
        }
    }

    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![Content::text(text)])
    }

    /// An assistant message with one text part.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, vec![Content::text(text)])
    }

    /// A system message with one text part.
    pub fn system(text: impl Into<String>) -> Self {
        Self::new(Role::System, vec![Content::text(text)])
    }

    /// A tool result answering `tool_call_id`.
    pub fn tool(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: Vec<Content>,
    ) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            name: Some(name.into()),
            ..Self::new(Role::Tool, content)
        }
    }

    /// All text parts joined by newlines.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        parts.join("\n")
    }
}
