//! The argument schema the model reads, generated from a tool input's type, and the check of
//! the enums it declares.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use schemars::generate::SchemaSettings;
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema};
use serde_json::Value;

use super::ToolInputError;

/// Shapes schemars' output like the hand-written schemas upstream sends: no `$schema`, `title`,
/// `format` or `default`; `Option<T>` as a plain `T` (absence, not `null`, is how a model leaves
/// a field out); no description on objects (the tool's own description says what the call does);
/// doc comments reflowed like rustdoc, so a wrapped paragraph reads as one line.
#[derive(Debug, Clone, Copy)]
struct UpstreamShape;

impl Transform for UpstreamShape {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(obj) = schema.as_object_mut() {
            for noise in ["$schema", "title", "format", "default"] {
                obj.remove(noise);
            }
            if let Some(Value::Array(types)) = obj.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    obj.insert("type".to_owned(), only);
                }
            }
            if obj.get("type").is_some_and(|t| t == "object") {
                obj.remove("description");
            }
            if let Some(Value::String(text)) = obj.get_mut("description") {
                *text = reflow(text);
            }
        }
        transform_subschemas(self, schema);
    }
}

/// Joins the lines of each paragraph with a space, keeping blank-line paragraph breaks.
fn reflow(doc: &str) -> String {
    doc.split("\n\n")
        .map(|paragraph| {
            paragraph
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The JSON schema of `T` as a tool's `parameters`: an inline object schema whose property
/// descriptions are `T`'s field doc comments. Generated once per type and then cloned: every
/// conversation builds its tools, and generating walks the whole type with its transforms.
pub fn parameters<T: JsonSchema + 'static>() -> Value {
    static MADE: LazyLock<Mutex<HashMap<TypeId, Value>>> = LazyLock::new(Mutex::default);
    let id = TypeId::of::<T>();
    if let Some(made) = MADE.lock().ok().and_then(|m| m.get(&id).cloned()) {
        return made;
    }
    let made = generate::<T>();
    if let Ok(mut m) = MADE.lock() {
        m.insert(id, made.clone());
    }
    made
}

fn generate<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(UpstreamShape)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// Checks every string of `value` against the `enum` its place in `schema` declares; the
/// error names the field (`task_list[1].status`) and the allowed values.
pub(crate) fn check_enums(value: &Value, schema: &Value, path: &str) -> Result<(), ToolInputError> {
    if let (Some(allowed), Value::String(got)) =
        (schema.get("enum").and_then(Value::as_array), value)
        && !allowed.contains(value)
    {
        return Err(ToolInputError::NotAllowed {
            field: path.to_owned(),
            allowed: allowed
                .iter()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                .collect(),
            got: got.clone(),
        });
    }
    match value {
        Value::Object(members) => {
            for (name, member) in members {
                if let Some(sub) = schema.get("properties").and_then(|p| p.get(name)) {
                    let inner = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    check_enums(member, sub, &inner)?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_enums(item, sub, &format!("{path}[{i}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Drops every member of `value` its place in `schema` does not declare (at any depth): the
/// model's stray arguments never reach an action, so events keep upstream's shape (upstream
/// refuses unknown fields). Says whether anything was dropped.
pub(crate) fn prune(value: &mut Value, schema: &Value) -> bool {
    match value {
        Value::Object(members) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return false;
            };
            let before = members.len();
            members.retain(|name, _| properties.contains_key(name));
            let mut dropped = members.len() != before;
            for (name, member) in members.iter_mut() {
                if let Some(sub) = properties.get(name) {
                    dropped |= prune(member, sub);
                }
            }
            dropped
        }
        Value::Array(items) => match schema.get("items") {
            Some(sub) => items.iter_mut().fold(false, |d, item| prune(item, sub) | d),
            None => false,
        },
        _ => false,
    }
}
