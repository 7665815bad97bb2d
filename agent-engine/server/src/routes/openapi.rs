//! The OpenAPI document of the route table (`/openapi.json`, `tandem openapi`): each route's
//! operation with its parameters, bodies and error answers, and every schema they refer to.

use std::collections::BTreeMap;

use tandem_protocol::{ErrorResponse, OpenAiErrorResponse, ValidationErrorResponse};
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    ComponentsBuilder, Content, InfoBuilder, OpenApi, OpenApiBuilder, Paths, RefOr, Required,
    ResponseBuilder,
};

use super::body::{SchemaRef, Schemas, schema};
use super::{Auth, Body, RouteDoc, route_docs};

fn method(m: &str) -> HttpMethod {
    match m {
        "POST" => HttpMethod::Post,
        "PUT" => HttpMethod::Put,
        "PATCH" => HttpMethod::Patch,
        "DELETE" => HttpMethod::Delete,
        _ => HttpMethod::Get,
    }
}

fn json_response(description: &str, schema: SchemaRef) -> ResponseBuilder {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", Content::new(Some(schema.reference())))
}

/// The OpenAPI document of [`route_docs`]: paths, their parameters, request and response
/// bodies, and every schema those refer to under `components/schemas`.
pub fn openapi() -> OpenApi {
    let mut paths = Paths::new();
    let mut schemas: Schemas = Vec::new();
    for d in route_docs() {
        for body in [&d.request, &d.response] {
            for s in body.schemas() {
                s.collect(&mut schemas);
            }
        }
        let mut op = OperationBuilder::new()
            .summary(Some(
                d.summary
                    .split(';')
                    .next()
                    .unwrap_or(d.summary)
                    .trim_end_matches('.'),
            ))
            .description(Some(if d.tandem {
                format!("{} (Tandem addition.)", d.summary)
            } else {
                d.summary.to_owned()
            }))
            .operation_id(Some(operation_id(&d)))
            .tag(d.tag);
        let socket = d.auth == Auth::Socket;
        if let Some((media, schema)) = d.request.content() {
            let description = if socket {
                "The client's WebSocket text frames, one JSON object each."
            } else {
                "The request body."
            };
            op = op.request_body(Some(
                RequestBodyBuilder::new()
                    .description(Some(description))
                    .required(Some(Required::True))
                    .content(media, Content::new(Some(schema)))
                    .build(),
            ));
        }
        let (status, description) = match &d.response {
            Body::Terminal(_) => (
                "101",
                "WebSocket: the data (terminal output, or the desktop's RFB bytes) as binary frames; these JSON text frames for errors. Closes 4001 without a valid key.",
            ),
            _ if socket => (
                "101",
                "WebSocket: the server's text frames, one JSON object each. Closes 4001 without a valid key.",
            ),
            _ => ("200", "Success"),
        };
        let mut ok = ResponseBuilder::new().description(description);
        if let Some((media, schema)) = d.response.content() {
            ok = ok.content(media, Content::new(Some(schema.clone())));
            if d.creates {
                op = op.response(
                    "201",
                    ResponseBuilder::new()
                        .description("Created")
                        .content(media, Content::new(Some(schema))),
                );
            }
        }
        op = op.response(status, ok);
        for seg in d.path.split('/').filter(|s| s.starts_with('{')) {
            let name = seg.trim_matches(|c| c == '{' || c == '}');
            op = op.parameter(
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String))),
            );
        }
        if matches!(d.request, Body::Json(_)) {
            op = op.response(
                "422",
                json_response(
                    "The body is not valid: the list names each wrong field",
                    schema::<ValidationErrorResponse>(),
                ),
            );
        }
        match d.auth {
            Auth::Key => {
                op = op
                    .security(SecurityRequirement::new(
                        "session_key",
                        Vec::<String>::new(),
                    ))
                    .response(
                        "401",
                        json_response(
                            "Missing or wrong session key: {\"detail\":\"Unauthorized\"}",
                            schema::<ErrorResponse>(),
                        ),
                    )
            }
            Auth::Bearer => {
                op = op
                    .security(SecurityRequirement::new("bearer", Vec::<String>::new()))
                    .response(
                        "401",
                        json_response("OpenAI-shaped error", schema::<OpenAiErrorResponse>()),
                    )
            }
            Auth::Socket | Auth::None => {}
        }
        if matches!(d.auth, Auth::Key | Auth::Bearer) {
            schema::<ErrorResponse>().collect(&mut schemas);
            schema::<OpenAiErrorResponse>().collect(&mut schemas);
            schema::<ValidationErrorResponse>().collect(&mut schemas);
        }
        paths.add_path_operation(d.path, vec![method(d.method)], op);
    }
    // Sorted and deduplicated, so the document is the same on every build.
    let schemas: BTreeMap<String, RefOr<Schema>> = schemas.into_iter().collect();
    let components = ComponentsBuilder::new()
        .schemas_from_iter(schemas)
        .security_scheme(
            "session_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-Session-API-Key"))),
        )
        .security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        )
        .build();
    OpenApiBuilder::new()
        .info(InfoBuilder::new().title("Tandem Agent Server").version(env!("CARGO_PKG_VERSION")).description(Some(
            "OpenHands agent-server 1.58 compatible REST and WebSocket API, plus Tandem's PTY socket, workspace endpoints, SSE event stream and OpenAI-compatible gateway.",
        )))
        .paths(paths)
        .components(Some(components))
        .build()
}

/// [`openapi`] as pretty JSON with a final newline: what `tandem openapi` prints and what
/// `ui/openapi.tandem.json` holds.
pub fn openapi_document() -> String {
    let mut text = serde_json::to_string_pretty(&openapi()).unwrap_or_default();
    text.push('\n');
    text
}

/// `get_api_conversations_conversation_id`, ...: unique per method and path.
fn operation_id(d: &RouteDoc) -> String {
    format!(
        "{}_{}",
        d.method.to_lowercase(),
        d.path
            .trim_matches('/')
            .replace(['/', '{', '}', '-', '.'], "_")
    )
}
