//! A serde [`Deserializer`] over the model's arguments (a JSON value) that is lenient where
//! models commonly slip and names the offending field when it must refuse.
//!
//! The leniency sits in the format, not in the types: any `Deserialize` type read through
//! [`Arguments`] gets it, while the same type read from the event log with `serde_json` stays
//! exactly as strict as before.
//! - an integer may come as `5`, `5.0` or `"5"`; a number as `2.5` or `"2.5"`;
//! - a boolean may come as `"true"` / `"false"` (any case);
//! - a list may come as a string holding a JSON array;
//! - a `null` member of an object counts as absent (a default applies, or "missing").

use std::fmt;

use serde::de::value::StringDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Value};

/// One step of the way from the arguments object to a value.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// A member of an object.
    Field(String),
    /// An element of a list.
    Index(usize),
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq)]
enum Problem {
    /// A required member is absent.
    Missing(String),
    /// The value is unusable; the text says why ("must be an integer, got \"two\"").
    Invalid(String),
}

/// Why the model's arguments do not parse, with the path of the field at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    /// From the innermost step out (steps are added as the error travels up).
    path: Vec<Step>,
    problem: Problem,
}

impl ArgumentError {
    fn invalid(why: String) -> Self {
        Self {
            path: Vec::new(),
            problem: Problem::Invalid(why),
        }
    }

    fn within(mut self, step: Step) -> Self {
        self.path.push(step);
        self
    }

    /// `task_list[0].title`.
    fn path_text(&self) -> String {
        let mut text = String::new();
        for step in self.path.iter().rev() {
            match step {
                Step::Field(name) if text.is_empty() => text.push_str(name),
                Step::Field(name) => {
                    text.push('.');
                    text.push_str(name);
                }
                Step::Index(i) => text.push_str(&format!("[{i}]")),
            }
        }
        text
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path_text();
        match (&self.problem, path.is_empty()) {
            (Problem::Missing(field), true) => write!(f, "missing required field `{field}`"),
            (Problem::Missing(field), false) => {
                write!(f, "missing required field `{path}.{field}`")
            }
            (Problem::Invalid(why), true) => f.write_str(why),
            (Problem::Invalid(why), false) => write!(f, "field `{path}` {why}"),
        }
    }
}

impl std::error::Error for ArgumentError {}

impl de::Error for ArgumentError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::invalid(msg.to_string())
    }

    fn invalid_type(unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::invalid(format!("must be {expected}, got {unexpected}"))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::invalid(format!(
            "must be one of {}, got `{variant}`",
            expected.join(", ")
        ))
    }

    fn missing_field(field: &'static str) -> Self {
        Self {
            path: Vec::new(),
            problem: Problem::Missing(field.to_owned()),
        }
    }
}

/// The JSON type of a value, for error messages (`an array`).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short rendering of a value for error messages.
fn show(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// An integer from a JSON number without fraction or a string holding one.
fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// One value of the model's arguments, read leniently.
#[derive(Debug)]
pub struct Arguments(pub Value);

impl Arguments {
    fn refuse(&self, why: &str) -> ArgumentError {
        ArgumentError::invalid(format!("{why}, got {}", type_name(&self.0)))
    }

    fn integer<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ArgumentError> {
        if let Value::Number(n) = &self.0
            && let Some(u) = n.as_u64()
            && n.as_i64().is_none()
        {
            return visitor.visit_u64(u);
        }
        match as_int(&self.0) {
            Some(i) => visitor.visit_i64(i),
            None => Err(ArgumentError::invalid(format!(
                "must be an integer, got {}",
                show(&self.0)
            ))),
        }
    }

    fn number<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ArgumentError> {
        let number = match &self.0 {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        match number {
            Some(f) => visitor.visit_f64(f),
            None => Err(ArgumentError::invalid(format!(
                "must be a number, got {}",
                show(&self.0)
            ))),
        }
    }
}

impl<'de> de::Deserializer<'de> for Arguments {
    type Error = ArgumentError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (_, Some(i), _) => visitor.visit_i64(i),
                (_, _, Some(f)) => visitor.visit_f64(f),
                _ => Err(ArgumentError::invalid(format!("unreadable number {n}"))),
            },
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => visitor.visit_seq(Items::new(items)),
            Value::Object(map) => visitor.visit_map(Fields::new(map)),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match &self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            // Models sometimes quote booleans.
            Value::String(s) if s.eq_ignore_ascii_case("true") => visitor.visit_bool(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => visitor.visit_bool(false),
            other => Err(ArgumentError::invalid(format!(
                "must be true or false, got {}",
                show(other)
            ))),
        }
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.number(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.number(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            _ => Err(self.refuse("must be a string")),
        }
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Items::new(items)),
            // Models sometimes send a list as a string holding its JSON.
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(Value::Array(items)) => visitor.visit_seq(Items::new(items)),
                _ => Err(ArgumentError::invalid(
                    "must be an array, got a string".to_owned(),
                )),
            },
            _ => Err(self.refuse("must be an array")),
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Fields::new(map)),
            _ => Err(self.refuse("must be an object")),
        }
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_map(visitor)
    }

    /// Unit variants, named by a string (`"view"`).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(s.into_deserializer()),
            _ => Err(self.refuse("must be a string")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! { i128 u128 bytes byte_buf unit unit_struct }
}

/// The elements of a list, each read leniently; an error gets the element's index.
struct Items {
    items: std::iter::Enumerate<std::vec::IntoIter<Value>>,
    len: usize,
}

impl Items {
    fn new(items: Vec<Value>) -> Self {
        Self {
            len: items.len(),
            items: items.into_iter().enumerate(),
        }
    }
}

impl<'de> SeqAccess<'de> for Items {
    type Error = ArgumentError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        let Some((i, item)) = self.items.next() else {
            return Ok(None);
        };
        self.len -= 1;
        seed.deserialize(Arguments(item))
            .map(Some)
            .map_err(|e| e.within(Step::Index(i)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

/// The members of an object, `null` ones left out; an error gets the member's name.
struct Fields {
    members: serde_json::map::IntoIter,
    current: Option<(String, Value)>,
}

impl Fields {
    fn new(map: Map<String, Value>) -> Self {
        Self {
            members: map.into_iter(),
            current: None,
        }
    }
}

impl<'de> MapAccess<'de> for Fields {
    type Error = ArgumentError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((name, value)) = self.members.by_ref().find(|(_, v)| !v.is_null()) else {
            return Ok(None);
        };
        let key: StringDeserializer<ArgumentError> = name.clone().into_deserializer();
        let key = seed.deserialize(key)?;
        self.current = Some((name, value));
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let Some((name, value)) = self.current.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        seed.deserialize(Arguments(value))
            .map_err(|e| e.within(Step::Field(name)))
    }
}
