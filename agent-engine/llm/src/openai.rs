//! Placeholder until the client lands.
#![allow(missing_docs, dead_code)]
/// OpenAI Chat Completions client.
pub struct OpenAiChat;
