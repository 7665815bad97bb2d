//! What a route's bodies are, for its OpenAPI entry: a named schema of a `tandem-protocol` type
//! (deriving utoipa's `ToSchema`), plain JSON, text, bytes, a multipart upload, an SSE stream or
//! WebSocket frames.

use std::borrow::Cow;

use utoipa::ToSchema;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};

pub(super) type Schemas = Vec<(String, RefOr<Schema>)>;

/// A named component schema: a type deriving (or implementing) utoipa's `ToSchema`.
#[derive(Clone, Copy)]
pub struct SchemaRef {
    /// Its name under `components/schemas`.
    pub name: fn() -> Cow<'static, str>,
    schema: fn() -> RefOr<Schema>,
    deps: fn(&mut Schemas),
}

impl std::fmt::Debug for SchemaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SchemaRef({})", (self.name)())
    }
}

impl SchemaRef {
    pub(super) fn reference(&self) -> RefOr<Schema> {
        RefOr::Ref(Ref::from_schema_name((self.name)()))
    }

    /// Adds this schema and every schema it refers to.
    pub(super) fn collect(&self, into: &mut Schemas) {
        into.push(((self.name)().into_owned(), (self.schema)()));
        (self.deps)(into);
    }
}

/// The schema of `T`.
pub fn schema<T: ToSchema>() -> SchemaRef {
    SchemaRef {
        name: T::name,
        schema: T::schema,
        deps: T::schemas,
    }
}

/// The shape of a request or response body.
#[derive(Debug, Clone)]
pub enum Body {
    /// No body.
    None,
    /// A JSON value of a named schema.
    Json(SchemaRef),
    /// A JSON list whose items are a named schema or `null` (batch gets of unknown ids).
    NullableList(SchemaRef),
    /// Any JSON (this document).
    AnyJson,
    /// A JSON integer.
    Integer,
    /// A JSON list of strings.
    Strings,
    /// `text/plain`.
    Text,
    /// `application/octet-stream`.
    Bytes,
    /// `multipart/form-data` with a `file` field.
    Multipart,
    /// `text/event-stream` whose `data:` lines are JSON of a named schema.
    Sse(SchemaRef),
    /// WebSocket text frames, each one JSON object of one of these schemas.
    Frames(Vec<SchemaRef>),
    /// WebSocket: binary data frames (terminal output, RFB), plus JSON text frames of these.
    Terminal(Vec<SchemaRef>),
}

impl Body {
    /// JSON of `T`.
    pub fn json<T: ToSchema>() -> Self {
        Self::Json(schema::<T>())
    }

    /// A JSON list of `T` or `null`.
    pub fn nullable_list<T: ToSchema>() -> Self {
        Self::NullableList(schema::<T>())
    }

    /// An SSE stream of `T`.
    pub fn sse<T: ToSchema>() -> Self {
        Self::Sse(schema::<T>())
    }

    /// WebSocket JSON frames.
    pub fn frames(of: Vec<SchemaRef>) -> Self {
        Self::Frames(of)
    }

    /// WebSocket terminal output and JSON frames.
    pub fn terminal(of: Vec<SchemaRef>) -> Self {
        Self::Terminal(of)
    }

    /// The named schemas it uses.
    pub fn schemas(&self) -> Vec<SchemaRef> {
        match self {
            Self::Json(s) | Self::NullableList(s) | Self::Sse(s) => vec![*s],
            Self::Frames(v) | Self::Terminal(v) => v.clone(),
            _ => Vec::new(),
        }
    }

    /// Media type and schema, `None` without a body.
    pub(super) fn content(&self) -> Option<(&'static str, RefOr<Schema>)> {
        let one_of = |v: &[SchemaRef]| -> RefOr<Schema> {
            match v {
                [one] => one.reference(),
                many => many
                    .iter()
                    .fold(OneOfBuilder::new(), |b, s| b.item(s.reference()))
                    .into(),
            }
        };
        let object = |t: Type| -> RefOr<Schema> { ObjectBuilder::new().schema_type(t).into() };
        Some(match self {
            Self::None => return None,
            Self::Json(s) => ("application/json", s.reference()),
            Self::NullableList(s) => (
                "application/json",
                ArrayBuilder::new()
                    .items(
                        OneOfBuilder::new()
                            .item(s.reference())
                            .item(object(Type::Null)),
                    )
                    .into(),
            ),
            Self::AnyJson => ("application/json", object(Type::Object)),
            Self::Integer => ("application/json", object(Type::Integer)),
            Self::Strings => (
                "application/json",
                ArrayBuilder::new().items(object(Type::String)).into(),
            ),
            Self::Text => ("text/plain", object(Type::String)),
            Self::Bytes => (
                "application/octet-stream",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::Binary,
                    )))
                    .into(),
            ),
            Self::Multipart => (
                "multipart/form-data",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .property(
                        "file",
                        ObjectBuilder::new().schema_type(Type::String).format(Some(
                            utoipa::openapi::SchemaFormat::KnownFormat(
                                utoipa::openapi::KnownFormat::Binary,
                            ),
                        )),
                    )
                    .required("file")
                    .into(),
            ),
            Self::Sse(s) => ("text/event-stream", s.reference()),
            Self::Frames(v) | Self::Terminal(v) => ("application/json", one_of(v)),
        })
    }
}
