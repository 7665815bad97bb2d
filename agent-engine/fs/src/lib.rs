//! File primitives every Tandem crate shares, so that a file written by the engine, a tool, the
//! completion log or the desktop app has the same guarantees: [`atomic_write`] replaces a file
//! atomically and durably with mode 0600, and [`sync_dir`] makes new names in a directory
//! survive a power loss.
//!
//! It sits below every other Tandem crate (the LLM clients use it, and the SDK cannot be below
//! them) and must never depend on one: std, `uuid` for temp names and `thiserror` only.

mod atomic;
mod error;

pub use atomic::{FILE_MODE, atomic_write, sync_dir};
pub use error::{Error, Result};
