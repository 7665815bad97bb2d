//! `tandem-demo`: the demo LLM, a friendly scripted model that lets a newcomer see Tandem's
//! whole agent loop (plan, terminal, file editor, finish) without a provider or an API key.
//! `tandem run --llm demo`, `tandem serve --llm demo` and the desktop app with no provider
//! configured start it through `tandem-server`'s `DemoLlm`.
//!
//! - [`demo_responder`] decides each answer from the request alone (it learns the
//!   conversation's workspace from the system prompt), so one server serves any number of
//!   conversations.
//! - [`DemoServer`] serves it as OpenAI Chat Completions on a loopback port (`POST
//!   /v1/chat/completions`, JSON or server-sent events, and `GET /v1/models`), keeping no
//!   record of the requests.
//! - [`Step`], [`Reply`] and the other [`script`] types say what a scripted model answers, and
//!   [`openai_chat`] renders them on the wire. `tandem-testkit` builds its scripted test server
//!   (request capture, invariant checks, errors, Anthropic and Responses) on these same types
//!   and re-exports them; its docs describe the script file format.
//!
//! This crate ships in release binaries, so it depends on no other Tandem crate and on nothing
//! test-only: never on `tandem-testkit` (which depends on it), and test helpers such as
//! `tempfile` stay in `[dev-dependencies]`. Its runtime dependencies (tokio, axum, serde_json,
//! futures) are ones `tandem-server` carries anyway.

pub mod http;
pub mod openai_chat;
mod responder;
pub mod script;
mod server;
pub mod site;

pub use responder::demo_responder;
pub use script::{
    ErrorReply, RawReply, Reply, Responder, Script, Step, ThinkingSpec, ToolCallSpec, UsageSpec,
};
pub use server::DemoServer;
