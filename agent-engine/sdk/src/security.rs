//! Placeholder until the analyzer lands.
#![allow(missing_docs, dead_code)]
pub struct RuleAnalyzer;
