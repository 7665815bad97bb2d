//! OpenAPI schemas (utoipa) of the types whose serde is hand-written: [`Content`] and [`Event`]
//! are tag-discriminated with a fallback variant, so their schemas are written here; every other
//! wire type derives `ToSchema` next to its definition. The agent server collects them into the
//! document it serves at `/openapi.json`.

use std::borrow::Cow;

use utoipa::openapi::schema::{
    AdditionalProperties, AllOfBuilder, ObjectBuilder, OneOfBuilder, Schema, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::{Content, Event, EventBase, ImageContent, Source, TextContent};

type Schemas = Vec<(String, RefOr<Schema>)>;

/// `{"<tag>": "<value>"}` with the tag required.
fn tag_object(tag: &str, values: &[&str], description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            tag,
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(values.iter().copied()))
                .description(Some(description)),
        )
        .required(tag)
}

impl PartialSchema for Content {
    fn schema() -> RefOr<Schema> {
        let part = |name: &str, tag: &str| {
            AllOfBuilder::new()
                .item(Ref::from_schema_name(name))
                .item(tag_object("type", &[tag], "The part's type."))
        };
        OneOfBuilder::new()
            .item(part("TextContent", "text"))
            .item(part("ImageContent", "image"))
            .description(Some(
                "One part of a message's content, discriminated by `type`.",
            ))
            .into()
    }
}

impl ToSchema for Content {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Content")
    }

    fn schemas(schemas: &mut Schemas) {
        schemas.push((TextContent::name().into(), TextContent::schema()));
        schemas.push((ImageContent::name().into(), ImageContent::schema()));
        <TextContent as ToSchema>::schemas(schemas);
        <ImageContent as ToSchema>::schemas(schemas);
    }
}

impl PartialSchema for Event {
    fn schema() -> RefOr<Schema> {
        let kind = tag_object(
            "kind",
            Event::KINDS,
            "The event's class; the other fields depend on it.",
        )
        .additional_properties(Some(AdditionalProperties::FreeForm(true)));
        AllOfBuilder::new()
            .item(Ref::from_schema_name("EventBase"))
            .item(kind)
            .description(Some(
                "One event of a conversation: the common fields, a `kind` naming its class, and \
                 that class's own fields (as in the upstream event models).",
            ))
            .into()
    }
}

impl ToSchema for Event {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Event")
    }

    fn schemas(schemas: &mut Schemas) {
        schemas.push((EventBase::name().into(), EventBase::schema()));
        <EventBase as ToSchema>::schemas(schemas);
        schemas.push((Source::name().into(), Source::schema()));
    }
}
