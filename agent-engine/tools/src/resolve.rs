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
/// catalog (a set such as `browser_tool_set` adds several), then the tools of the MCP servers
/// of `spec.mcp_config`, all kept to those matching `filter_tools_regex`, then
/// `include_default_tools` (never filtered, as upstream). A
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
    add(&mut tools, mcp_tools(spec, catalog, &env).await?);
    if let Some(pattern) = spec.filter_tools_regex.as_deref() {
        let re = filter_regex(pattern)?;
        tools.retain(|t| re.is_match(&t.definition().name).unwrap_or(false));
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

/// The tools of the spec's MCP servers, from the catalog's `mcp_config` source (the host
/// registers `tandem_mcp::register`). A spec with servers and a catalog without that source is an
/// error, not a spec quietly missing its tools.
async fn mcp_tools(
    spec: &AgentSpec,
    catalog: &ToolCatalog,
    env: &ToolEnv,
) -> Result<Vec<Arc<dyn Tool>>, ResolveError> {
    let Some(config) = spec.mcp_config.as_ref() else {
        return Ok(Vec::new());
    };
    match catalog
        .make_from_field(MCP_CONFIG, config.clone(), env.clone())
        .await
    {
        Some(Ok(tools)) => Ok(tools),
        Some(Err(reason)) => Err(ResolveError::at(
            &[MCP_CONFIG],
            reason.to_string(),
            config.clone(),
        )),
        None => Err(ResolveError::at(
            &[MCP_CONFIG],
            "this host has no MCP client: its tool catalog has no `mcp_config` source".to_owned(),
            config.clone(),
        )),
    }
}

/// The agent spec's field naming MCP servers.
const MCP_CONFIG: &str = "mcp_config";

/// `filter_tools_regex` as upstream applies it (Python's `re.match`: anchored at the start,
/// lookarounds allowed).
fn filter_regex(pattern: &str) -> Result<fancy_regex::Regex, ResolveError> {
    fancy_regex::Regex::new(&format!("^(?:{pattern})")).map_err(|e| {
        ResolveError::at(
            &["filter_tools_regex"],
            format!("filter_tools_regex is not a valid regular expression: {e}"),
            Value::from(pattern),
        )
    })
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tandem_protocol::LlmConfig;

    use super::*;
    use crate::{ThinkTool, builtin_catalog};

    fn spec_with_servers() -> AgentSpec {
        let mut spec = AgentSpec::default_for(LlmConfig::new("none"));
        spec.tools.clear();
        spec.include_default_tools.clear();
        spec.mcp_config = Some(json!({"mcpServers": {"one": {"command": "true"}}}));
        spec
    }

    #[tokio::test]
    async fn servers_without_an_mcp_source_are_refused_by_name() {
        let env = ToolEnv::new(std::env::temp_dir());
        let err = resolve_tools(&spec_with_servers(), &builtin_catalog(), env)
            .await
            .err()
            .expect("refused");
        assert_eq!(err.path, ["mcp_config"]);
        assert!(err.message.contains("no MCP client"), "{}", err.message);
    }

    #[tokio::test]
    async fn the_mcp_source_gets_the_config_and_its_tools_join() {
        let mut catalog = builtin_catalog();
        catalog.register_source("mcp_config", |config, _| {
            let made = if config["mcpServers"]["one"].is_object() {
                Ok(vec![Arc::new(ThinkTool::new()) as Arc<dyn Tool>])
            } else {
                Err(tandem_sdk::MakeToolError::Config(
                    "no server `one`".to_owned(),
                ))
            };
            Box::pin(std::future::ready(made))
        });
        let env = ToolEnv::new(std::env::temp_dir());
        let tools = resolve_tools(&spec_with_servers(), &catalog, env.clone())
            .await
            .expect("made");
        let names: Vec<_> = tools.iter().map(|t| t.definition().name.clone()).collect();
        assert_eq!(names, ["think"]);

        let mut spec = spec_with_servers();
        spec.mcp_config = Some(json!({"mcpServers": {}}));
        let err = resolve_tools(&spec, &catalog, env)
            .await
            .err()
            .expect("refused");
        assert_eq!(
            (err.path, err.message),
            (vec!["mcp_config".to_owned()], "no server `one`".to_owned())
        );
    }
}
