//! Placeholder until agent context lands.
#![allow(missing_docs, dead_code)]
pub struct AgentContext;
pub struct Skill;
pub fn load_workspace_skills() {}
pub fn render_system_prompt() {}
