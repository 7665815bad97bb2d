//! Conversation titles: a short title the LLM writes from the first user message, cleaned to
//! one line of at most [`MAX_TITLE_CHARS`] characters, or a truncation of the message when the
//! LLM fails or says nothing usable.

use tandem_llm::{Llm, LlmRequest};
use tandem_protocol::Message;
use tokio_util::sync::CancellationToken;

/// Longest title, characters.
pub const MAX_TITLE_CHARS: usize = 60;
/// How much of the message the title request quotes, characters.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// A title for a conversation that starts with `first_message`: asked of `llm` without tools,
/// cleaned by [`clean_title`], else [`fallback_title`]. Never fails.
pub async fn generate_title(
    llm: &dyn Llm,
    first_message: &str,
    cancel: CancellationToken,
) -> String {
    let quoted: String = first_message.chars().take(MAX_MESSAGE_CHARS).collect();
    let prompt = format!(
        "Write a concise title of at most 8 words for a conversation that starts with the \
         message below. Answer with the title only: no quotes, no trailing punctuation, no \
         preamble.\n\n<MESSAGE>\n{quoted}\n</MESSAGE>"
    );
    let request = LlmRequest {
        messages: vec![Message::user(prompt)],
        ..LlmRequest::default()
    };
    match llm.completion(request, cancel).await {
        Ok(response) => {
            let title = clean_title(&response.message.text());
            if title.is_empty() {
                fallback_title(first_message)
            } else {
                title
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, "title generation failed; truncating the message");
            fallback_title(first_message)
        }
    }
}

/// A model's title made presentable: its first non-empty line, without a `Title:` label,
/// markdown emphasis or heading marks, surrounding quotes and trailing punctuation, spaces
/// collapsed, cut at a word boundary to [`MAX_TITLE_CHARS`].
pub fn clean_title(raw: &str) -> String {
    let line = raw
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title = line.trim_start_matches('#').trim();
    for label in ["title:", "Title:", "TITLE:"] {
        if let Some(rest) = title.strip_prefix(label) {
            title = rest.trim();
        }
    }
    let quotes: &[char] = &['"', '\'', '`', '*', '_', '“', '”', '‘', '’', '«', '»'];
    let title = title.trim_matches(|c: char| quotes.contains(&c) || c.is_whitespace());
    let title = title.trim_end_matches(|c: char| {
        matches!(c, '.' | '!' | '?' | ':' | ';' | ',') || c.is_whitespace()
    });
    let title = title.trim_matches(|c: char| quotes.contains(&c) || c.is_whitespace());
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&title, false)
}

/// The first non-empty line of `message`, cut to [`MAX_TITLE_CHARS`] with an ellipsis.
pub fn fallback_title(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&line, true)
}

/// `text` cut to [`MAX_TITLE_CHARS`] (ellipsis included), at a word boundary when one is near.
fn cut(text: &str, ellipsis: bool) -> String {
    if text.chars().count() <= MAX_TITLE_CHARS {
        return text.to_owned();
    }
    let room = if ellipsis {
        MAX_TITLE_CHARS - 1
    } else {
        MAX_TITLE_CHARS
    };
    let hard: String = text.chars().take(room).collect();
    let soft = match hard.rfind(' ') {
        Some(i) if hard[..i].chars().count() >= room / 2 => hard[..i].to_owned(),
        _ => hard,
    };
    let mut out = soft.trim_end().to_owned();
    if ellipsis {
        out.push('…');
    }
    out
}
