//! Placeholder.
#![allow(missing_docs, dead_code)]
/// Retry policy.
pub struct RetryPolicy;
