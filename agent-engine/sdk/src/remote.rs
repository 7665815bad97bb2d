//! Remote mode: conversations and workspaces on an OpenHands-compatible agent server (ours,
//! `tandem serve`, or upstream's `openhands-agent-server`), over its REST API and the
//! `/sockets/events/{id}` WebSocket.
//!
//! Entry points: [`RemoteWorkspace::connect`] checks the server and the session key (header
//! `X-Session-API-Key`), runs commands and moves files; [`RemoteWorkspace::create_conversation`]
//! and [`RemoteWorkspace::attach`] give a [`RemoteConversation`], which offers the operations of
//! a local conversation (both implement [`ConversationClient`](crate::ConversationClient)) and
//! keeps a gap-free, duplicate-free copy of the event log through socket drops (see `stream`).
//! Errors are [`RemoteError`]s with a machine-readable code (through the trait, wrapped in
//! [`SdkError::Remote`](crate::SdkError::Remote)).

mod conversation;
mod error;
mod http;
mod stream;
mod workspace;

#[cfg(test)]
mod tests;

pub use conversation::{RemoteConversation, RemoteConversationOptions};
pub use error::{RemoteError, RemoteResult};
pub use http::{SESSION_KEY_HEADER, ServerClient};
pub use stream::LiveState;
pub use workspace::{CommandResult, RemoteWorkspace};
