//! Placeholder until the event log lands.
#![allow(missing_docs, dead_code)]
pub struct ConversationMeta;
pub struct ConversationStore;
pub struct EventLog;
pub struct LoadedLog;
pub fn atomic_write() {}
pub fn unmatched_actions() {}
