//! Comparing a tool's argument schema with upstream's. What differs by design is taken out of
//! both sides first: the descriptions (our own words, not upstream's) and the fields the agent
//! adds to every tool's arguments.

use serde_json::Value;

/// The schema with every `description` removed, at any depth.
pub fn strip_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "description")
                .map(|(k, v)| (k.clone(), strip_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_descriptions).collect()),
        other => other.clone(),
    }
}

/// Upstream's schema without the `security_risk` and `summary` the agent adds.
pub fn without_agent_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(props) = v["properties"].as_object_mut() {
        props.remove("security_risk");
        props.remove("summary");
    }
    v
}
