//! Token counting for context decisions (condensing, routing by context window), with
//! tiktoken's encodings compiled into the binary.
//!
//! OpenAI's newer models (gpt-4o, gpt-4.1, gpt-5, o-series, gpt-oss) use `o200k_base`, older
//! ones `cl100k_base`. Other providers' tokenizers are not public or not shipped; their counts
//! are approximated with `cl100k_base`, which is close enough to decide when a history nears a
//! context window, never to bill.

use serde_json::Value;
use tandem_protocol::{Content, Message};
use tiktoken_rs::CoreBPE;

/// Tokens every message costs beyond its content (role, separators), per OpenAI's cookbook.
const PER_MESSAGE: usize = 3;
/// Tokens that prime the reply.
const REPLY_PRIMING: usize = 3;
/// What one image is counted as: a low-detail tile, whatever its size. Images are resized by
/// providers, so any figure is an estimate; this keeps routing and condensing conservative.
const PER_IMAGE: usize = 85;

/// Which encoding counts `model`'s tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `o200k_base`: gpt-4o, gpt-4.1, gpt-5, o1/o3/o4, gpt-oss.
    O200k,
    /// `cl100k_base`: gpt-4, gpt-3.5, and the approximation for everyone else.
    Cl100k,
}

impl Encoding {
    /// The encoding for a `provider/model` name.
    pub fn for_model(model: &str) -> Self {
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let o200k = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "gpt-oss",
            "chatgpt-4o",
            "codex",
        ];
        let o_series = name.len() > 1
            && name.starts_with('o')
            && name[1..].starts_with(|c: char| c.is_ascii_digit());
        if o_series || o200k.iter().any(|p| name.starts_with(p)) {
            Self::O200k
        } else {
            Self::Cl100k
        }
    }

    fn bpe(self) -> &'static CoreBPE {
        match self {
            Self::O200k => tiktoken_rs::o200k_base_singleton(),
            Self::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        }
    }
}

/// Tokens of `text` under `model`'s encoding (special-token text counted as ordinary text).
pub fn count_text_tokens(model: &str, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    Encoding::for_model(model).bpe().encode_ordinary(text).len()
}

/// Tokens of a prompt made of `messages`, including per-message overhead, tool calls (name
/// and arguments), reasoning text sent back, and a fixed estimate per image.
pub fn count_message_tokens(model: &str, messages: &[Message]) -> usize {
    let bpe = Encoding::for_model(model).bpe();
    let count = |text: &str| {
        if text.is_empty() {
            0
        } else {
            bpe.encode_ordinary(text).len()
        }
    };
    let mut total = REPLY_PRIMING;
    for message in messages {
        total += PER_MESSAGE + 1; // the role
        for part in &message.content {
            total += match part {
                Content::Text(text) => count(&text.text),
                Content::Image(image) => PER_IMAGE * image.image_urls.len(),
                _ => 0,
            };
        }
        for call in message.tool_calls.iter().flatten() {
            total += PER_MESSAGE + count(&call.name) + count(&call.arguments);
        }
        if let Some(name) = &message.name {
            total += 1 + count(name);
        }
        if let Some(id) = &message.tool_call_id {
            total += count(id);
        }
        if let Some(reasoning) = &message.reasoning_content {
            total += count(reasoning);
        }
    }
    total
}

/// Tokens of a whole request: the messages plus the tool schemas as they are serialised.
pub fn count_request_tokens(model: &str, messages: &[Message], tools: &[Value]) -> usize {
    let tools: usize = tools
        .iter()
        .map(|t| count_text_tokens(model, &t.to_string()))
        .sum();
    count_message_tokens(model, messages) + tools
}
