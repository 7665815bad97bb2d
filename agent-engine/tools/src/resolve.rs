//! Making an agent spec's tools: its `tools` entries through a [`ToolCatalog`], then the
//! built-ins it includes. The one path every host takes, so a spec means the same in `tandem
//! run`, `tandem serve` and the desktop.

use std::sync::Arc;

use serde_json::Value;
use tandem_protocol::AgentSpec;
use tandem_sdk::{Tool, ToolCatalog, ToolEnv};

/// Why a spec's tools could not be made: which entry, and what was wrong with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ResolveError {
    /// Where in the agent spec (`["tools", "2", "name"]`).
    pub path: Vec<String>,
    /// What was wrong, for the person who wrote the spec.
    pub message: String,
    /// The offending value.
    pub value: Value,
}

impl ResolveError {
    fn at(path: &[&str], message: String, value: impl Into<Value>) -> Self {
        Self {
            path: path.iter().map(|p| (*p).to_owned()).collect(),
            message,
            value: value.into(),
        }
    }
}

/// The tools of `spec`, in the order the model sees them: each of `spec.tools` made by the
/// catalog (a set such as `browser_tool_set` adds several), then `include_default_tools`. A
/// tool whose name is already there is not added twice. An unknown name, or a factory that
/// refuses its params, is an error naming the entry.
pub async fn resolve_tools(
    spec: &AgentSpec,
    catalog: &ToolCatalog,
    env: ToolEnv,
) -> Result<Vec<Arc<dyn Tool>>, ResolveError> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for (i, t) in spec.tools.iter().enumerate() {
        let idx = i.to_string();
        let made = catalog.make(&t.name, t.params.clone(), env.clone()).await;
        match made {
            Some(Ok(made)) => add(&mut tools, made),
            Some(Err(reason)) => {
                return Err(ResolveError::at(
                    &["tools", &idx],
                    format!("tool `{}` cannot be made: {reason}", t.name),
                    Value::from(t.name.as_str()),
                ));
            }
            None => {
                return Err(ResolveError::at(
                    &["tools", &idx, "name"],
                    format!(
                        "unknown tool `{}`; this engine has {}",
                        t.name,
                        catalog.names().join(", ")
                    ),
                    Value::from(t.name.as_str()),
                ));
            }
        }
    }
    for (i, name) in spec.include_default_tools.iter().enumerate() {
        let idx = i.to_string();
        match catalog.make(name, Default::default(), env.clone()).await {
            Some(Ok(made)) => add(&mut tools, made),
            Some(Err(reason)) => {
                return Err(ResolveError::at(
                    &["include_default_tools", &idx],
                    format!("built-in tool `{name}` cannot be made: {reason}"),
                    Value::from(name.as_str()),
                ));
            }
            None => {
                return Err(ResolveError::at(
                    &["include_default_tools", &idx],
                    format!("unknown built-in tool `{name}`"),
                    Value::from(name.as_str()),
                ));
            }
        }
    }
    Ok(tools)
}

/// Appends `made`, skipping tools whose name is already taken (a spec naming a tool twice).
fn add(tools: &mut Vec<Arc<dyn Tool>>, made: Vec<Arc<dyn Tool>>) {
    for t in made {
        let name = &t.definition().name;
        if !tools.iter().any(|have| &have.definition().name == name) {
            tools.push(t);
        }
    }
}
