//! Reading `<function=name><parameter=arg>value</parameter></function>` calls out of a reply.

use serde_json::{Map, Number, Value};

use super::MALFORMED_PREFIX;
use super::describe::{function_of, parameters, type_name};

const FUNCTION_OPEN: &str = "<function=";
const FUNCTION_CLOSE: &str = "</function>";
const PARAMETER_OPEN: &str = "<parameter=";
const PARAMETER_CLOSE: &str = "</parameter>";

/// A reply split into its text and its calls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedReply {
    /// The text outside the calls (before the first, and any after the last).
    pub text: String,
    /// The calls, in order.
    pub calls: Vec<ParsedCall>,
}

/// One call read from a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as a JSON object, or, for a call that could not be read,
    /// [`MALFORMED_PREFIX`], the reason, a newline and the call's text.
    pub arguments: String,
}

impl ParsedCall {
    /// Whether the call could not be read.
    pub fn is_malformed(&self) -> bool {
        self.arguments.starts_with(MALFORMED_PREFIX)
    }
}

/// Splits `text` into prose and calls, typing each parameter from `tools` (OpenAI function
/// format). `truncated` says the reply was cut at the token limit: a final call without
/// `</function>` is then incomplete rather than ended by the stop sequence.
pub fn parse_reply(text: &str, tools: &[Value], truncated: bool) -> ParsedReply {
    let mut reply = ParsedReply::default();
    let Some(first) = text.find(FUNCTION_OPEN) else {
        reply.text = text.to_owned();
        return reply;
    };
    reply.text = text[..first].trim_end().to_owned();
    let mut rest = &text[first..];
    while let Some(start) = rest.find(FUNCTION_OPEN) {
        let between = rest[..start].trim();
        if !between.is_empty() {
            if !reply.text.is_empty() {
                reply.text.push('\n');
            }
            reply.text.push_str(between);
        }
        let block = &rest[start..];
        let after_open = &block[FUNCTION_OPEN.len()..];
        // The block runs to its `</function>`, else to the next call, else to the end.
        let next_open = after_open
            .find(FUNCTION_OPEN)
            .map(|i| i + FUNCTION_OPEN.len());
        let close = block.find(FUNCTION_CLOSE);
        let (end, closed) = match (close, next_open) {
            (Some(c), Some(n)) if c < n => (c + FUNCTION_CLOSE.len(), true),
            (Some(c), None) => (c + FUNCTION_CLOSE.len(), true),
            (_, Some(n)) => (n, false),
            (None, None) => (block.len(), false),
        };
        let original = block[..end].trim_end();
        let body = if closed {
            &block[..end - FUNCTION_CLOSE.len()]
        } else {
            &block[..end]
        };
        // A last call without `</function>` was ended by the stop sequence, unless the reply
        // was cut at the token limit.
        let call = if !closed && (truncated || next_open.is_some()) {
            malformed(
                name_of(body),
                "the call is not closed with </function>",
                original,
            )
        } else {
            read_call(body, tools, original)
        };
        reply.calls.push(call);
        rest = &block[end..];
    }
    let tail = rest.trim();
    if !tail.is_empty() {
        if !reply.text.is_empty() {
            reply.text.push('\n');
        }
        reply.text.push_str(tail);
    }
    reply
}

/// The name in `<function=NAME>` (up to `>` or the end of the line).
fn name_of(body: &str) -> String {
    let after = &body[FUNCTION_OPEN.len().min(body.len())..];
    let end = after.find(['>', '\n']).unwrap_or(after.len());
    after[..end].trim().to_owned()
}

fn malformed(name: String, reason: &str, original: &str) -> ParsedCall {
    let reason = reason.replace('\n', " ");
    ParsedCall {
        name,
        arguments: format!("{MALFORMED_PREFIX}{reason}\n{original}"),
    }
}

/// Reads one `<function=...>` block (without its `</function>`).
fn read_call(body: &str, tools: &[Value], original: &str) -> ParsedCall {
    let after = &body[FUNCTION_OPEN.len()..];
    let Some(gt) = after.find('>').filter(|gt| !after[..*gt].contains('\n')) else {
        return malformed(
            name_of(body),
            "the <function=...> tag is not closed with >",
            original,
        );
    };
    let name = after[..gt].trim().to_owned();
    if name.is_empty() {
        return malformed(name, "the call names no tool", original);
    }
    let tool = tools
        .iter()
        .map(function_of)
        .find(|f| f.get("name").and_then(Value::as_str) == Some(name.as_str()));
    let (properties, _) = tool.map(parameters).unwrap_or_default();
    let mut args = Map::new();
    let mut rest = &after[gt + 1..];
    while let Some(start) = rest.find(PARAMETER_OPEN) {
        let after_open = &rest[start + PARAMETER_OPEN.len()..];
        let Some(gt) = after_open
            .find('>')
            .filter(|gt| !after_open[..*gt].contains('\n'))
        else {
            return malformed(name, "a <parameter=...> tag is not closed with >", original);
        };
        let param = after_open[..gt].trim().to_owned();
        let value_and_rest = &after_open[gt + 1..];
        let Some(close) = value_and_rest.find(PARAMETER_CLOSE) else {
            let reason = format!("parameter `{param}` is not closed with </parameter>");
            return malformed(name, &reason, original);
        };
        let raw = trim_one_newline(&value_and_rest[..close]);
        rest = &value_and_rest[close + PARAMETER_CLOSE.len()..];
        if tool.is_some() && !properties.contains_key(&param) {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            let reason = format!(
                "`{name}` has no parameter `{param}` (its parameters: {})",
                known.join(", ")
            );
            return malformed(name, &reason, original);
        }
        let schema = properties.get(&param).cloned().unwrap_or(Value::Null);
        match typed(raw, &schema) {
            Ok(value) => {
                args.insert(param, value);
            }
            Err(expected) => {
                let reason = format!("parameter `{param}` must be {expected}");
                return malformed(name, &reason, original);
            }
        }
    }
    ParsedCall {
        name,
        arguments: Value::Object(args).to_string(),
    }
}

/// A value without the one newline that follows its opening tag and the one before its
/// closing tag (multi-line values are written on their own lines).
fn trim_one_newline(value: &str) -> &str {
    let value = value
        .strip_prefix("\r\n")
        .or_else(|| value.strip_prefix('\n'))
        .unwrap_or(value);
    value
        .strip_suffix("\r\n")
        .or_else(|| value.strip_suffix('\n'))
        .unwrap_or(value)
}

/// `raw` as the JSON type `schema` declares; the error names what was expected.
fn typed(raw: &str, schema: &Value) -> Result<Value, &'static str> {
    let text = raw.trim();
    match type_name(schema) {
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| {
                // `3.0` is an integer written as a float.
                text.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| Value::from(f as i64))
                    .ok_or(())
            })
            .map_err(|()| "an integer"),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(|n| text.parse::<i64>().map_or(Value::Number(n), Value::from))
            .ok_or("a number"),
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err("true or false"),
        },
        "array" => match serde_json::from_str(text) {
            Ok(Value::Array(items)) => Ok(Value::Array(items)),
            _ => Err("a JSON array"),
        },
        "object" => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Ok(Value::Object(map)),
            _ => Err("a JSON object"),
        },
        "null" => Ok(Value::Null),
        _ => Ok(Value::String(raw.to_owned())),
    }
}
