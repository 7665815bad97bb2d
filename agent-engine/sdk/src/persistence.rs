//! Persistence of conversations in the upstream OpenHands agent-server layout, so a conversation
//! recorded by the upstream server opens in Tandem and vice versa:
//!
//! ```text
//! <root>/<conversation id as 32 hex>/
//!     base_state.json   ConversationState, LLM keys stripped, secret values redacted (0600)
//!     meta.json         ConversationMeta: title, timestamps, upstream's other fields (0600)
//!     events/
//!         .eventlog.lock              file lock held by the one writer
//!         .eventlog-len-N.marker      empty; its name carries the event count
//!         event-00000-<event id>.json one compact JSON object per event (0600)
//! ```
//!
//! Every file is written atomically ([`atomic_write`]: temp file in the same directory, write,
//! sync, rename), so a reader never sees half a file and a crash leaves either the old or the
//! new content. [`EventLog`] is the single writer of a conversation's `events/` directory; an
//! event is durable once [`EventLog::append`] returns. Loading is tolerant: a corrupt or missing
//! file ends the log at the last good event and says so in [`LoadedLog::warnings`] instead of
//! failing. [`ConversationStore`] ties the three parts together; [`unmatched_actions`] finds the
//! tool calls a crash interrupted.

mod atomic;
mod event_log;
mod file_name;
mod meta;
mod read_events;
mod recovery;
mod store;

pub use atomic::atomic_write;
pub use event_log::{EventLog, LoadedLog};
pub use meta::ConversationMeta;
pub use recovery::unmatched_actions;
pub use store::{ConversationStore, FORKED_AT, FORKED_FROM, ForkOptions};
