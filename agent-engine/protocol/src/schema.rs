//! OpenAPI schemas (utoipa) of the types whose serde is hand-written: [`Content`], [`Action`],
//! [`Observation`] and [`Event`] are tag-discriminated with a fallback variant, so their schemas
//! are written here; every other wire type derives `ToSchema` next to its definition. The agent
//! server collects them into the document it serves at `/openapi.json`.
//!
//! `Action`, `Observation` and `Event` are `oneOf` unions of their variants' schemas with a
//! `kind` discriminator, each variant's schema stating its own `kind`; the union is built from
//! the variant list `tagged_enum!` declares ([`Variant`]), so a new variant is documented without
//! further code. A kind outside the union (from a newer or an upstream server) is kept verbatim
//! on the wire; the union's description says so, and clients show such a kind generically.

use std::borrow::Cow;

use utoipa::openapi::schema::{
    AllOfBuilder, Discriminator, ObjectBuilder, OneOfBuilder, Schema, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::{Action, Content, Event, Observation};

type Schemas = Vec<(String, RefOr<Schema>)>;

/// One known variant of a `tagged_enum!` type: its tag and its struct's schema.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The tag value on the wire (`kind` / `type`).
    pub tag: &'static str,
    /// The struct's name under `components/schemas`.
    pub name: fn() -> Cow<'static, str>,
    /// The struct's schema (its fields, without the tag).
    pub schema: fn() -> RefOr<Schema>,
    /// Adds the schemas the struct refers to.
    pub schemas: fn(&mut Schemas),
}

/// `{"<tag>": "<value>"}` with the tag required.
fn tag_object(tag: &str, values: &[&str], description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(tag, tag_property(values, description))
        .required(tag)
}

fn tag_property(values: &[&str], description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
        .description(Some(description))
}

/// `schema` with the required property `tag` whose only value is `value`: a union member as it
/// appears on the wire.
fn with_tag(schema: RefOr<Schema>, tag: &str, value: &str) -> RefOr<Schema> {
    let description = format!("Always `{value}`: names this variant.");
    match schema {
        RefOr::T(Schema::Object(mut object)) => {
            object
                .properties
                .insert(tag.to_owned(), tag_property(&[value], &description).into());
            object.required.push(tag.to_owned());
            RefOr::T(Schema::Object(object))
        }
        RefOr::T(Schema::AllOf(mut all)) => {
            all.items
                .push(tag_object(tag, &[value], &description).into());
            RefOr::T(Schema::AllOf(all))
        }
        other => AllOfBuilder::new()
            .item(other)
            .item(tag_object(tag, &[value], &description))
            .into(),
    }
}

/// The `oneOf` of `variants`, discriminated by `tag`.
fn union(tag: &str, variants: &[Variant], description: &str) -> RefOr<Schema> {
    let refs = || variants.iter().map(|v| (v.tag, (v.name)()));
    let mapping = refs().map(|(t, name)| (t, Ref::from_schema_name(name).ref_location));
    refs()
        .fold(OneOfBuilder::new(), |b, (_, name)| {
            b.item(Ref::from_schema_name(name))
        })
        .discriminator(Some(Discriminator::with_mapping(tag, mapping)))
        .description(Some(format!(
            "{description} Discriminated by `{tag}`. A server may send a `{tag}` not listed \
             here (a newer or an upstream server's); such an object is kept verbatim, and a \
             client shows it generically."
        )))
        .into()
}

/// Adds each variant's schema, with its tag, and the schemas it refers to.
fn variant_schemas(tag: &str, variants: &[Variant], schemas: &mut Schemas) {
    for v in variants {
        schemas.push(((v.name)().into_owned(), with_tag((v.schema)(), tag, v.tag)));
        (v.schemas)(schemas);
    }
}

/// `PartialSchema` and `ToSchema` for a `kind`-discriminated union.
macro_rules! kind_union {
    ($($name:ident: $description:literal,)*) => {$(
        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                union("kind", $name::VARIANTS, $description)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }

            fn schemas(schemas: &mut Schemas) {
                variant_schemas("kind", $name::VARIANTS, schemas);
            }
        }
    )*};
}

kind_union! {
    Action: "A parsed tool call: what the tool will do (`ActionEvent.action`).",
    Observation: "What a tool returned (`ObservationEvent.observation`).",
    Event: "One event of a conversation: the common fields (`EventBase`), a `kind` naming its class, and that class's own fields (as in the upstream event models).",
}

impl PartialSchema for Content {
    fn schema() -> RefOr<Schema> {
        Content::VARIANTS
            .iter()
            .fold(OneOfBuilder::new(), |b, v| {
                b.item(
                    AllOfBuilder::new()
                        .item(Ref::from_schema_name((v.name)()))
                        .item(tag_object("type", &[v.tag], "The part's type.")),
                )
            })
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
        for v in Content::VARIANTS {
            schemas.push(((v.name)().into_owned(), (v.schema)()));
            (v.schemas)(schemas);
        }
    }
}
