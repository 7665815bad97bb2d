//! `tandem-testkit`: test-only helpers of the Tandem engine. Its centre is
//! [`ScriptedLlmServer`], a real HTTP server on loopback that speaks the three provider wire
//! protocols Tandem's clients use: OpenAI Chat Completions (`/v1/chat/completions`), OpenAI
//! Responses (`/v1/responses`) and Anthropic Messages (`/v1/messages`), each as JSON and as
//! server-sent events. It answers every protocol from one script, captures every request and
//! checks each protocol's invariants on it (every tool result answers an earlier tool call;
//! every tool call is answered before the next assistant turn). The `scripted-llm` binary
//! serves a script file or the [`demo_responder`] for UI tests. [`run_on_terminal`] runs a
//! program on a real pseudo-terminal. [`llm`] has the configuration that points an LLM client
//! at the server and fails fast ([`ScriptedLlmServer::llm_config`]), and the tool its requests
//! offer; [`tool_schema`] compares a tool's argument schema with upstream's.
//!
//! The script types ([`Step`], [`Reply`], ...), the OpenAI Chat rendering and the demo model
//! live in `tandem-demo`, which release binaries carry for `--llm demo`; this crate builds on
//! them and re-exports them. Nothing but tests, benchmarks and the `scripted-llm` binary may
//! depend on this crate: it is a dev-dependency everywhere. Of Tandem's crates it depends on
//! `tandem-demo` and `tandem-protocol` only (never on `tandem-llm`, which tests against it, so
//! its helpers take and return protocol types and JSON). Entry points:
//! [`ScriptedLlmServer::start`], [`ScriptedLlmServer::with_responder`], [`Step`],
//! [`demo_responder`].
//!
//! # Script format
//!
//! A script is a JSON list of steps, or an object `{"steps": [...], "no_tools_text": "..."}`
//! where `no_tools_text` answers requests without `tools` (title and summary calls) without
//! consuming a step. Each request consumes the next step; when none is left the server answers
//! 500 with a body saying the script is exhausted and [`ScriptedLlmServer::exhausted`] turns
//! true, so a test fails loudly. Steps are discriminated by `type`:
//!
//! ```json
//! [
//!   {"type": "reply", "text": "Hello!"},
//!   {"type": "reply", "text": "Let me look.", "reasoning": "thinking...",
//!    "tool_calls": [
//!      {"name": "terminal", "arguments": {"command": "ls"}},
//!      {"id": "call_x", "name": "file_editor", "arguments": "{\"command\": \"vi"}
//!    ],
//!    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 50,
//!              "reasoning_tokens": 5},
//!    "finish_reason": "tool_calls", "delay_ms": 0, "chunk_delay_ms": 0, "model": "gpt-x"},
//!   {"type": "reply", "text": "no usage block at all", "no_usage": true},
//!   {"type": "error", "status": 429, "retry_after": "2", "body": "slow down"},
//!   {"type": "error", "status": 502, "content_type": "text/html",
//!    "body": "<html><title>502 Bad Gateway</title></html>"},
//!   {"type": "error", "status": 400, "body": {"error": {"message": "raw JSON body"}}},
//!   {"type": "garbled"},
//!   {"type": "truncated", "text": "cut in half"},
//!   {"type": "raw", "status": 200, "content_type": "text/event-stream",
//!    "headers": [["x-a", "b"]], "body": "data: ...\n\n"}
//! ]
//! ```
//!
//! - `reply`: every field is optional. Tool-call `arguments` is a JSON value (serialised) or a
//!   string sent verbatim, so malformed JSON can be scripted; ids default to
//!   `call_<request>_<position>`. `finish_reason` defaults to `tool_calls` or `stop`. Usage is
//!   computed deterministically from the request and reply sizes when not scripted.
//! - `error`: a string `body` becomes `{"error":{"message":...}}` unless `content_type` is given
//!   (then it is sent verbatim); a JSON `body` is sent as it is; `retry_after` is the header
//!   value (seconds or HTTP-date).
//! - `garbled`: 200 with a body that is not JSON (an SSE event with broken JSON when streaming).
//! - `truncated`: a `reply` whose JSON body is cut in half, or whose stream stops halfway with
//!   no finish reason and no `[DONE]`.
//! - `raw`: a verbatim answer, for replaying recorded provider traffic.
//!
//! Streaming requests (`stream: true`) get `chat.completion.chunk` events (text and arguments in
//! small pieces, a final chunk with `finish_reason`, a usage chunk when
//! `stream_options.include_usage` is set) and `data: [DONE]`. Responses and Anthropic Messages
//! streams carry the same text, reasoning and tool calls as their own named events. `GET
//! /v1/models` lists one model.

mod anthropic;
pub mod fixtures;
mod invariants;
pub mod llm;
pub mod mcp_servers;
mod responses;
mod server;
pub mod site;
mod terminal;
pub mod tool_schema;

pub use server::{CapturedRequest, ScriptedLlmServer, Source, WireProtocol};
pub use tandem_demo::{
    ErrorReply, RawReply, Reply, Responder, Script, Step, ThinkingSpec, ToolCallSpec, UsageSpec,
    demo_responder,
};
pub use terminal::run_on_terminal;
