//! [`FnTool`]: a tool an application adds without a protocol type of its own — a name, a
//! description, a JSON Schema and an async function.
//!
//! Its calls travel as upstream's custom tools' do: the action is an object of the model's
//! arguments tagged `<Name>Action`, the observation one with `content` and `is_error` tagged
//! `<Name>Observation` (both [`Action::Unknown`] / [`Observation::Unknown`] here, kept verbatim
//! by every part of the engine, shown generically by the UI, masked like any observation).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tandem_protocol::{Action, Observation, ToolInputError, tool_io};

use super::{Tool, ToolAnnotations, ToolContext, ToolDefinition};

/// What a run answers: the text the model reads, or the text of its failure.
type Answer = Result<String, String>;

type Run = dyn Fn(Map<String, Value>, ToolContext) -> BoxFuture<'static, Answer> + Send + Sync;

/// A tool made of a function. The function receives the model's arguments (checked to be an
/// object holding every `required` property of the schema) and answers the text the model
/// reads, or an error (any `Display`: its text is what the model reads as a failed call).
#[derive(Clone)]
pub struct FnTool {
    definition: ToolDefinition,
    run: Arc<Run>,
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.definition.name)
            .finish_non_exhaustive()
    }
}

impl FnTool {
    /// A tool called `name` (what the model calls), described by `description`, whose
    /// arguments follow the JSON Schema `parameters` (an object schema).
    pub fn new<F, Fut, E>(name: &str, description: &str, parameters: Value, run: F) -> Self
    where
        F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let camel = camel_case(name);
        Self {
            definition: ToolDefinition {
                name: name.to_owned(),
                description: description.to_owned(),
                parameters,
                asks_security_risk: true,
                annotations: ToolAnnotations::default(),
                action_type: format!("{camel}Action"),
                observation_type: format!("{camel}Observation"),
            },
            run: Arc::new(move |args, ctx| {
                let answer = run(args, ctx);
                Box::pin(async move { answer.await.map_err(|e| e.to_string()) })
            }),
        }
    }

    /// Marks the tool as only reading (the security analyzer rates its calls low risk).
    pub fn read_only(mut self) -> Self {
        self.definition.annotations.read_only = true;
        self
    }

    fn observation(&self, text: String, is_error: bool) -> Observation {
        Observation::Unknown(json!({
            "content": [{"type": "text", "text": text}],
            "is_error": is_error,
            "kind": self.definition.observation_type,
        }))
    }
}

impl Tool for FnTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse_action(&self, arguments: Value) -> Result<Action, ToolInputError> {
        let Value::Object(mut args) = arguments else {
            return Err(ToolInputError::NotAnObject {
                got: tool_io::type_name(&arguments),
            });
        };
        let required = self.definition.parameters.get("required");
        for name in required.and_then(Value::as_array).into_iter().flatten() {
            if let Some(name) = name.as_str()
                && !args.contains_key(name)
            {
                return Err(ToolInputError::Missing(name.to_owned()));
            }
        }
        args.insert("kind".into(), json!(self.definition.action_type));
        Ok(Action::Unknown(Value::Object(args)))
    }

    fn execute<'a>(&'a self, action: &'a Action, ctx: ToolContext) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            let args = match action {
                Action::Unknown(Value::Object(args))
                    if args.get("kind") == Some(&json!(self.definition.action_type)) =>
                {
                    let mut args = args.clone();
                    args.remove("kind");
                    args
                }
                other => {
                    let text = format!("{} cannot run a {}", self.definition.name, other.kind());
                    return self.observation(text, true);
                }
            };
            match (self.run)(args, ctx).await {
                Ok(text) => self.observation(text, false),
                Err(text) => self.observation(text, true),
            }
        })
    }
}

/// `word_count` → `WordCount`.
fn camel_case(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}
