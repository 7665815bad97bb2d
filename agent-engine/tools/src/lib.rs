//! `tandem-tools`: the agent's core tools, one module per tool, each with its definition (the
//! schema and description the model reads) apart from its executor.
//!
//! Depends on `tandem-sdk` (the [`Tool`](tandem_sdk::Tool) trait) and `tandem-protocol`; never
//! on servers or the desktop host. Entry point: [`default_tools`].

pub mod file_editor;
pub mod finish;
pub mod task_tracker;
pub mod terminal;
pub mod think;
