//! The crate's integration tests, linked as one test binary (one link per change, not one
//! per file): each module is one file of tests/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod definitions;
mod file_editor;
mod replay;
mod search;
mod task_tracker;
mod terminal;
mod think_finish;
