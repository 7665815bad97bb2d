//! The system-prompt section that teaches a model without function calling how to call tools,
//! and the text form of a call.

use serde_json::{Map, Value};
use tandem_protocol::MessageToolCall;

use super::{MALFORMED_PREFIX, RESULT_HEADER};

/// The tool section of the system prompt: the call form, its rules, an example built from the
/// tools at hand, and each tool with its parameters.
pub fn tools_prompt(tools: &[Value]) -> String {
    let mut out = String::from(
        "# Calling tools\n\n\
         In this conversation you call tools by writing the call as text in your reply, in \
         exactly this form:\n\n\
         <function=TOOL_NAME>\n\
         <parameter=PARAMETER_NAME>value</parameter>\n\
         <parameter=ANOTHER_PARAMETER>\n\
         a value that runs\n\
         over several lines\n\
         </parameter>\n\
         </function>\n\n\
         Rules:\n\
         - One call per reply, at its end. Say what you need to say before the call; stop \
         writing after `</function>`.\n\
         - Write values as plain text: no quotes around strings and no escaping. Numbers and \
         booleans as they are (`42`, `true`); arrays and objects as JSON (`[\"a\", \"b\"]`).\n\
         - Give every required parameter, leave out optional ones you do not need, and use no \
         parameter that is not listed.\n",
    );
    out.push_str(&format!(
        "- The result comes back in the next message, starting with \
         `{RESULT_HEADER} [TOOL_NAME]:`.\n\
         - When you need no tool, answer with text only.\n"
    ));
    if let Some(example) = example(tools) {
        out.push_str("\n## Example\n\n");
        out.push_str(&example);
    }
    out.push_str("\n## Tools\n");
    for tool in tools {
        let function = function_of(tool);
        let name = function.get("name").and_then(Value::as_str).unwrap_or("");
        out.push_str(&format!("\n### {name}\n"));
        if let Some(description) = function.get("description").and_then(Value::as_str) {
            out.push_str(description.trim());
            out.push('\n');
        }
        let (properties, required) = parameters(function);
        if properties.is_empty() {
            out.push_str("Parameters: none.\n");
            continue;
        }
        out.push_str("Parameters:\n");
        for (param, schema) in &properties {
            let needed = if required.contains(&param.as_str()) {
                "required"
            } else {
                "optional"
            };
            out.push_str(&format!("- `{param}` ({}, {needed})", type_name(schema)));
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                out.push_str(": ");
                out.push_str(&description.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
                let choices: Vec<String> = choices
                    .iter()
                    .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                    .collect();
                out.push_str(&format!(" One of: {}.", choices.join(", ")));
            }
            out.push('\n');
        }
    }
    out
}

/// The `function` object of an OpenAI tool (or the tool itself when it is already one).
pub(super) fn function_of(tool: &Value) -> &Value {
    tool.get("function").unwrap_or(tool)
}

/// The properties (in schema order) and required names of a tool's parameters.
pub(super) fn parameters(function: &Value) -> (Map<String, Value>, Vec<&str>) {
    let schema = function.get("parameters");
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    (properties, required)
}

/// The JSON type a parameter's schema declares (`string` when it declares none): the first
/// non-null of `type` (a name or a list), then of `anyOf`/`oneOf`.
pub(super) fn type_name(schema: &Value) -> &str {
    declared_type(schema)
        .or_else(|| {
            ["anyOf", "oneOf"]
                .iter()
                .filter_map(|k| schema.get(*k).and_then(Value::as_array))
                .flatten()
                .find_map(declared_type)
        })
        .unwrap_or("string")
}

/// The first non-null name in a schema's `type` (a name or a list of names).
fn declared_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) if t != "null" => Some(t.as_str()),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

/// A worked example: a request and the reply that calls the first tool with its required
/// parameters.
fn example(tools: &[Value]) -> Option<String> {
    let function = function_of(tools.first()?);
    let name = function.get("name").and_then(Value::as_str)?;
    let (properties, required) = parameters(function);
    let mut args = Map::new();
    for param in required {
        let schema = properties.get(param).cloned().unwrap_or(Value::Null);
        args.insert(param.to_owned(), sample_value(name, param, &schema));
    }
    let call = MessageToolCall {
        name: name.to_owned(),
        arguments: Value::Object(args).to_string(),
        ..MessageToolCall::default()
    };
    Some(format!(
        "A request such as \"Please start on the task\" could be answered with:\n\n\
         I will start by using the `{name}` tool.\n{}\n\n\
         and the next message would then begin with `{RESULT_HEADER} [{name}]:`.\n",
        render_call(&call)
    ))
}

/// A plausible value for an example call.
fn sample_value(tool: &str, param: &str, schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match (tool, param, type_name(schema)) {
        (_, "command", "string") if tool.contains("terminal") || tool.contains("bash") => {
            Value::String("ls -la".into())
        }
        (_, "path", "string") => Value::String("/workspace/README.md".into()),
        (_, _, "integer") => Value::from(1),
        (_, _, "number") => Value::from(1.5),
        (_, _, "boolean") => Value::Bool(true),
        (_, _, "array") => Value::Array(Vec::new()),
        (_, _, "object") => Value::Object(Map::new()),
        _ => Value::String(format!("the {param}")),
    }
}

/// The text form of a call: strings written raw, other values as JSON. A call whose arguments
/// are not a JSON object (one the model wrote badly) is written as the model wrote it.
pub fn render_call(call: &MessageToolCall) -> String {
    if let Some(rest) = call.arguments.strip_prefix(MALFORMED_PREFIX) {
        return rest
            .split_once('\n')
            .map_or(rest, |(_, original)| original)
            .to_owned();
    }
    let mut out = format!("<function={}>\n", call.name);
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(args)) => {
            for (param, value) in args {
                let text = match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                if text.contains('\n') {
                    out.push_str(&format!("<parameter={param}>\n{text}\n</parameter>\n"));
                } else {
                    out.push_str(&format!("<parameter={param}>{text}</parameter>\n"));
                }
            }
        }
        _ if call.arguments.trim().is_empty() => {}
        _ => out.push_str(&format!("{}\n", call.arguments)),
    }
    out.push_str("</function>");
    out
}
