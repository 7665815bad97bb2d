//! An MCP server's tool as an agent tool: the model sees the server's name, description and
//! input schema; its arguments are checked against that schema (leniently where models slip:
//! `"5"` for a number) and sent as an `MCPToolAction`; the result's text and images come back
//! as an `MCPToolObservation`.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tandem_protocol::tool_io;
use tandem_protocol::{
    Action, Content, ImageContent, McpToolAction, McpToolObservation, Observation,
};
use tandem_sdk::{Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolInputError};

use crate::McpServer;
use crate::connection::{McpCallResult, McpToolInfo};

/// One tool of one MCP server.
pub struct McpTool {
    definition: ToolDefinition,
    /// The tool's name on its server (the model's name may carry the server's prefix).
    remote_name: String,
    server: Arc<McpServer>,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.definition.name)
            .field("server", &self.server.name())
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// The tool `info` of `server`, shown to the model as `name`; an error says why its schema
    /// cannot be used.
    pub fn new(
        server: Arc<McpServer>,
        info: McpToolInfo,
        name: String,
    ) -> Result<Self, UnusableSchema> {
        let schema = usable_schema(&info.input_schema)?;
        let validator = jsonschema::options()
            .build(&schema)
            .map_err(|e| UnusableSchema::NotJsonSchema(e.to_string()))?;
        let hints = info.annotations.as_ref();
        let hint = |k: &str, default: bool| {
            hints
                .and_then(|a| a.get(k))
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        let definition = ToolDefinition {
            name,
            description: info
                .description
                .filter(|d| !d.trim().is_empty())
                .unwrap_or_else(|| "No description provided".to_owned()),
            parameters: schema,
            asks_security_risk: true,
            annotations: ToolAnnotations {
                read_only: hint("readOnlyHint", false),
                destructive: hint("destructiveHint", true),
                idempotent: hint("idempotentHint", false),
                open_world: hint("openWorldHint", true),
            },
            action_type: "MCPToolAction".to_owned(),
            observation_type: "MCPToolObservation".to_owned(),
        };
        Ok(Self {
            definition,
            remote_name: info.name,
            server,
            validator,
        })
    }

    /// The server this tool belongs to.
    pub fn server(&self) -> &Arc<McpServer> {
        &self.server
    }

    fn observation(&self, result: McpCallResult) -> McpToolObservation {
        let name = &self.definition.name;
        let mut content = vec![Content::text(format!("[Tool '{name}' executed.]"))];
        content.extend(result.content.iter().filter_map(convert_block));
        if content.len() == 1
            && let Some(structured) = &result.structured
        {
            content.push(Content::text(structured.to_string()));
        }
        McpToolObservation {
            content,
            is_error: result.is_error,
            tool_name: name.clone(),
            extra: Default::default(),
        }
    }
}

/// Why an MCP tool's input schema cannot be used, so the tool is skipped (the text follows
/// `tool `name` skipped: `).
#[derive(Debug, thiserror::Error)]
pub enum UnusableSchema {
    /// The schema is not a JSON object.
    #[error("its input schema is not a JSON object: {0}")]
    NotAnObject(Value),
    /// The schema's `type` is not `"object"`.
    #[error("its input schema's type is {0}, not \"object\"")]
    NotAnObjectType(Value),
    /// The schema's `properties` is not an object.
    #[error("its input schema's properties are not an object: {0}")]
    PropertiesNotAnObject(Value),
    /// The validator refused the schema.
    #[error("its input schema is not valid JSON Schema: {0}")]
    NotJsonSchema(String),
}

/// The schema as the model gets it, or why it cannot be used: it must be an object schema.
fn usable_schema(schema: &Value) -> Result<Value, UnusableSchema> {
    let Some(o) = schema.as_object() else {
        return Err(UnusableSchema::NotAnObject(schema.clone()));
    };
    let mut o = o.clone();
    match o.get("type") {
        None => {
            o.insert("type".into(), Value::String("object".into()));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(t) => return Err(UnusableSchema::NotAnObjectType(t.clone())),
    }
    match o.get("properties") {
        None => {
            o.insert("properties".into(), Value::Object(Map::new()));
        }
        Some(Value::Object(_)) => {}
        Some(p) => return Err(UnusableSchema::PropertiesNotAnObject(p.clone())),
    }
    Ok(Value::Object(o))
}

/// MCP content block → what the model reads. Images become data URLs (as upstream); other
/// kinds a short note, so the model knows something came back.
fn convert_block(block: &Value) -> Option<Content> {
    let text = |k: &str| block.get(k).and_then(Value::as_str);
    match text("type")? {
        "text" => text("text").map(Content::text),
        "image" => {
            let data = text("data")?;
            let mime = text("mimeType").unwrap_or("image/png");
            Some(Content::Image(ImageContent {
                cache_prompt: false,
                image_urls: vec![format!("data:{mime};base64,{data}")],
                extra: Default::default(),
            }))
        }
        "resource" => {
            let r = block.get("resource")?;
            let uri = r.get("uri").and_then(Value::as_str).unwrap_or("");
            Some(Content::text(match r.get("text").and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => format!("[binary resource {uri} omitted]"),
            }))
        }
        "resource_link" => Some(Content::text(format!(
            "[resource link: {} {}]",
            text("uri").unwrap_or(""),
            text("name").unwrap_or("")
        ))),
        other => Some(Content::text(format!(
            "[{other} content ({}) omitted]",
            text("mimeType").unwrap_or("unknown type")
        ))),
    }
}

/// Reads a string as the type the schema wants, where models commonly send `"5"` or
/// `"true"` or a JSON-encoded list.
fn coerce(value: Value, schema: Option<&Value>) -> Value {
    let Value::String(s) = &value else {
        return value;
    };
    let Some(types) = schema.and_then(|s| s.get("type")) else {
        return value;
    };
    let wants = |t: &str| match types {
        Value::String(x) => x == t,
        Value::Array(xs) => xs.iter().any(|x| x == t),
        _ => false,
    };
    if wants("string") {
        return value;
    }
    let trimmed = s.trim();
    if (wants("integer") || wants("number"))
        && let Ok(n) = serde_json::from_str::<serde_json::Number>(trimmed)
    {
        return Value::Number(n);
    }
    if wants("boolean") && matches!(trimmed, "true" | "false") {
        return Value::Bool(trimmed == "true");
    }
    if (wants("array") || wants("object"))
        && let Ok(v @ (Value::Array(_) | Value::Object(_))) = serde_json::from_str::<Value>(trimmed)
    {
        return v;
    }
    value
}

impl Tool for McpTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse_action(&self, arguments: Value) -> Result<Action, ToolInputError> {
        let object = match arguments {
            Value::Object(o) => o,
            Value::Null => Map::new(),
            other => {
                return Err(ToolInputError::NotAnObject {
                    got: tool_io::type_name(&other),
                });
            }
        };
        let properties = self.definition.parameters.get("properties");
        // Like upstream: a null argument is an absent one.
        let data: Map<String, Value> = object
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| {
                let v = coerce(v, properties.and_then(|p| p.get(&k)));
                (k, v)
            })
            .collect();
        let value = Value::Object(data);
        let problems: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(3)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = at.trim_start_matches('/').replace('/', ".");
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("field `{at}`: {e}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return Err(ToolInputError::Schema {
                tool: self.definition.name.clone(),
                problems,
            });
        }
        let Value::Object(data) = value else {
            return Err(ToolInputError::NotAnObject {
                got: tool_io::type_name(&value),
            });
        };
        Ok(Action::Mcp(McpToolAction {
            data,
            extra: Default::default(),
        }))
    }

    fn execute<'a>(&'a self, action: &'a Action, ctx: ToolContext) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            let name = &self.definition.name;
            let Action::Mcp(action) = action else {
                return McpToolObservation::error(
                    name,
                    format!("{name} cannot run a {}", action.kind()),
                )
                .into();
            };
            let call = self.server.call(&self.remote_name, action.data.clone());
            let observation = tokio::select! {
                result = call => match result {
                    Ok(r) => self.observation(r),
                    Err(e) => McpToolObservation::error(name, format!("Error calling MCP tool {name}: {e}")),
                },
                () = ctx.cancel.cancelled() => McpToolObservation::error(
                    name,
                    format!("the call of {name} was interrupted"),
                ),
            };
            observation.into()
        })
    }

    fn close(&self) {
        self.server.close();
    }

    /// Upstream's `MCPToolDefinition`, which its clients decode by `kind` and read the
    /// server's own tool from (`mcp_tool`).
    fn wire_definition(&self) -> Option<Map<String, Value>> {
        let d = &self.definition;
        let mut mcp_tool = Map::new();
        mcp_tool.insert("name".into(), Value::from(self.remote_name.as_str()));
        mcp_tool.insert("description".into(), Value::from(d.description.as_str()));
        mcp_tool.insert("inputSchema".into(), d.parameters.clone());
        let mut fields = Map::new();
        fields.insert("kind".into(), Value::from("MCPToolDefinition"));
        fields.insert("mcp_tool".into(), Value::Object(mcp_tool));
        Some(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_read_as_the_schema_types() {
        let s = json!({"type": "number"});
        assert_eq!(coerce(json!("5"), Some(&s)), json!(5));
        assert_eq!(coerce(json!("x"), Some(&s)), json!("x"));
        assert_eq!(
            coerce(json!("true"), Some(&json!({"type": "boolean"}))),
            json!(true)
        );
        assert_eq!(
            coerce(json!("[1]"), Some(&json!({"type": "array"}))),
            json!([1])
        );
        assert_eq!(
            coerce(json!("5"), Some(&json!({"type": ["string", "number"]}))),
            json!("5")
        );
    }

    #[test]
    fn schemas_must_describe_objects() {
        assert!(usable_schema(&json!({"type": "array"})).is_err());
        assert!(usable_schema(&json!("x")).is_err());
        assert_eq!(
            usable_schema(&json!({})).unwrap(),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn images_become_data_urls() {
        let c = convert_block(&json!({"type": "image", "data": "AAA", "mimeType": "image/png"}));
        let Some(Content::Image(i)) = c else {
            panic!("{c:?}")
        };
        assert_eq!(i.image_urls, ["data:image/png;base64,AAA"]);
    }
}
