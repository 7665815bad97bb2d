//! WebSocket endpoints: `/sockets/events/{id}` (upstream's event stream), `/sockets/bash-events`
//! (upstream's bash stream) and `/sockets/pty/{id}` (Tandem: the agent's terminal or a shell of
//! one's own). Each authenticates before any data flows ([`crate::auth::authenticate`]).

pub mod bash;
pub mod events;
pub mod pty;

/// How often the server pings an idle socket.
pub const PING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(20);
