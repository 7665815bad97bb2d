//! The OpenAPI document: every route of the table has its documented bodies, the document is
//! structurally valid OpenAPI 3 (every `$ref` resolves, path parameters declared, operation ids
//! unique), and `ui/openapi.tandem.json` (the UI's type source) is the current document.
//! `TANDEM_UPDATE_OPENAPI=1` rewrites the snapshot instead of failing on a stale one.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};
use tandem_server::routes::{Auth, Body, RouteDoc, openapi, openapi_document, route_docs};

fn doc() -> Value {
    serde_json::to_value(openapi()).unwrap()
}

/// Every `$ref` under `node`, with where it was found.
fn refs<'a>(node: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match node {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "$ref" {
                    if let Some(r) = v.as_str() {
                        out.push((at.clone(), r));
                    }
                } else {
                    refs(v, format!("{at}/{k}"), out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                refs(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// What is wrong with `doc` as an OpenAPI 3 document (structurally).
fn structural_problems(doc: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")) {
        problems.push(format!("openapi version is {}", doc["openapi"]));
    }
    for field in ["title", "version"] {
        if !doc["info"][field].is_string() {
            problems.push(format!("info.{field} is missing"));
        }
    }
    let mut all = Vec::new();
    refs(doc, String::new(), &mut all);
    for (at, r) in all {
        let target = r
            .strip_prefix("#/")
            .map(|p| p.split('/').fold(doc, |node, seg| &node[seg]));
        if !target.is_some_and(|t| t.is_object()) {
            problems.push(format!("{at}: $ref {r} does not resolve"));
        }
    }
    let mut ids = BTreeSet::new();
    let Some(paths) = doc["paths"].as_object() else {
        problems.push("no paths".into());
        return problems;
    };
    for (path, item) in paths {
        if !path.starts_with('/') {
            problems.push(format!("path {path} does not start with /"));
        }
        let params: BTreeSet<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        for (method, op) in item.as_object().into_iter().flatten() {
            let declared: BTreeSet<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path" && p["required"] == true)
                .filter_map(|p| p["name"].as_str())
                .collect();
            if declared != params {
                problems.push(format!(
                    "{method} {path}: path parameters {declared:?}, expected {params:?}"
                ));
            }
            match op["operationId"].as_str() {
                Some(id) if ids.insert(id.to_owned()) => {}
                other => problems.push(format!("{method} {path}: operationId {other:?}")),
            }
            let responses = op["responses"].as_object();
            if responses.is_none_or(|r| r.is_empty()) {
                problems.push(format!("{method} {path}: no responses"));
            }
            for (code, resp) in responses.into_iter().flatten() {
                if !resp["description"].is_string() {
                    problems.push(format!("{method} {path} {code}: no description"));
                }
            }
        }
    }
    problems
}

/// The schema names a body's content refers to (directly, as list items or in a oneOf).
fn named(content: &Value) -> BTreeSet<String> {
    let mut all = Vec::new();
    refs(content, String::new(), &mut all);
    all.into_iter()
        .filter_map(|(_, r)| r.strip_prefix("#/components/schemas/"))
        .map(str::to_owned)
        .collect()
}

/// What the document lacks of `d`'s bodies.
fn body_problems(doc: &Value, d: &RouteDoc) -> Vec<String> {
    let op = &doc["paths"][d.path][d.method.to_lowercase()];
    let here = format!("{} {}", d.method, d.path);
    if !op.is_object() {
        return vec![format!("{here}: not in the document")];
    }
    let mut problems = Vec::new();
    let expect = |body: &Body, content: &Value, what: &str, problems: &mut Vec<String>| {
        let Some(media) = content.as_object() else {
            problems.push(format!("{here}: no {what} content"));
            return;
        };
        if media.values().any(|m| !m["schema"].is_object()) {
            problems.push(format!("{here}: {what} content without a schema"));
        }
        let found = named(content);
        for s in body.schemas() {
            let name = (s.name)().into_owned();
            if !found.contains(&name) {
                problems.push(format!("{here}: {what} does not refer to {name}"));
            }
        }
    };
    if matches!(d.request, Body::None) {
        if !op["requestBody"].is_null() {
            problems.push(format!("{here}: documents a request body it does not take"));
        }
    } else {
        expect(
            &d.request,
            &op["requestBody"]["content"],
            "request",
            &mut problems,
        );
    }
    let status = if d.auth == Auth::Socket { "101" } else { "200" };
    if matches!(d.response, Body::None) {
        problems.push(format!("{here}: the table gives no response body"));
    } else {
        expect(
            &d.response,
            &op["responses"][status]["content"],
            "response",
            &mut problems,
        );
    }
    problems
}

#[test]
fn every_route_documents_its_bodies() {
    let doc = doc();
    let problems: Vec<String> = route_docs()
        .iter()
        .flat_map(|d| body_problems(&doc, d))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_document_is_structurally_valid_openapi_3() {
    let doc = doc();
    let problems = structural_problems(&doc);
    assert!(problems.is_empty(), "{problems:#?}");
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    assert!(schemas.len() > 40, "{} schemas", schemas.len());
}

#[test]
fn the_checks_catch_a_broken_document() {
    let mut doc = doc();
    let ws = "/api/conversations/{conversation_id}/workspace/tree";
    doc["paths"][ws]["get"]["responses"]["200"]["content"]["application/json"]["schema"] =
        json!({"$ref": "#/components/schemas/NoSuchThing"});
    doc["paths"]["/alive"]["get"]["operationId"] = json!("get_health");
    let structural = structural_problems(&doc);
    assert!(
        structural.iter().any(|p| p.contains("NoSuchThing")),
        "{structural:?}"
    );
    assert!(
        structural.iter().any(|p| p.contains("operationId")),
        "{structural:?}"
    );
    let tree = route_docs()
        .into_iter()
        .find(|d| d.path == ws)
        .expect("the tree route");
    let bodies = body_problems(&doc, &tree);
    assert!(
        bodies.iter().any(|p| p.contains("WorkspaceTree")),
        "{bodies:?}"
    );
    let put = "/api/conversations/{conversation_id}/workspace/file";
    let write = route_docs()
        .into_iter()
        .find(|d| d.path == put && d.method == "PUT")
        .expect("the write route");
    doc["paths"][put]["put"]
        .as_object_mut()
        .unwrap()
        .remove("requestBody");
    assert!(
        body_problems(&doc, &write)
            .iter()
            .any(|p| p.contains("no request content"))
    );
}

/// The bodies the UI and clients rely on, by name.
#[test]
fn main_and_tandem_routes_name_their_types() {
    let doc = doc();
    let c = "/api/conversations/{conversation_id}";
    let request = |method: &str, path: &str| named(&doc["paths"][path][method]["requestBody"]);
    let response = |method: &str, path: &str, status: &str| {
        named(&doc["paths"][path][method]["responses"][status])
    };
    let one = |s: &str| BTreeSet::from([s.to_owned()]);
    let ws = |p: &str| format!("{c}/workspace/{p}");
    assert_eq!(response("get", &ws("tree"), "200"), one("WorkspaceTree"));
    assert_eq!(response("get", &ws("file"), "200"), one("WorkspaceFile"));
    assert_eq!(
        request("put", &ws("file")),
        one("WriteWorkspaceFileRequest")
    );
    assert_eq!(response("get", &ws("diff"), "200"), one("WorkspaceDiff"));
    assert_eq!(
        response("get", &format!("{c}/events/stream"), "200"),
        one("Event")
    );
    assert_eq!(
        doc["paths"][format!("{c}/events/stream")]["get"]["responses"]["200"]["content"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["text/event-stream"]
    );
    assert_eq!(
        request("get", "/sockets/pty/{conversation_id}"),
        one("PtyClientFrame")
    );
    assert_eq!(
        response("get", "/sockets/pty/{conversation_id}", "101"),
        one("PtyServerFrame")
    );
    assert_eq!(response("get", "/server_info", "200"), one("ServerInfo"));
    assert_eq!(
        request("post", "/api/conversations"),
        one("StartConversationRequest")
    );
    for status in ["200", "201"] {
        assert_eq!(
            response("post", "/api/conversations", status),
            one("ConversationInfo")
        );
    }
    assert_eq!(response("get", c, "200"), one("ConversationInfo"));
    assert_eq!(
        response("get", &format!("{c}/events/search"), "200"),
        one("EventPage")
    );
    assert_eq!(
        request("post", &format!("{c}/events")),
        one("SendMessageRequest")
    );
    assert_eq!(
        request("post", &format!("{c}/events/respond_to_confirmation")),
        one("ConfirmationResponseRequest")
    );
    let schemas = &doc["components"]["schemas"];
    // Server info documents Tandem's own fields.
    for field in ["llm_model", "demo", "capabilities"] {
        assert!(
            schemas["ServerInfo"]["properties"][field].is_object(),
            "ServerInfo.{field}"
        );
    }
    assert!(
        schemas["EventPage"]["properties"]["items"]["items"]["$ref"]
            == "#/components/schemas/Event"
    );
}

/// Whether the schema `name` (an object or an `allOf` of parts) requires `kind` with the one
/// value `tag`.
fn states_its_kind(schemas: &Value, name: &str, tag: &str) -> bool {
    let s = &schemas[name];
    let parts: Vec<&Value> = match s["allOf"].as_array() {
        Some(all) => all.iter().collect(),
        None => vec![s],
    };
    parts.iter().any(|p| {
        p["properties"]["kind"]["enum"] == json!([tag])
            && p["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("kind")))
    })
}

/// `Action`, `Observation` and `Event` are `oneOf` unions discriminated by `kind`, listing every
/// known variant (from the `tagged_enum!` declaration), and each variant's schema states its
/// own `kind`: what makes the generated TypeScript a discriminated union.
#[test]
fn the_kind_unions_are_discriminated_by_kind() {
    use tandem_protocol::{Action, Event, Observation};
    let doc = doc();
    let schemas = &doc["components"]["schemas"];
    for (union, kinds, variants) in [
        ("Action", Action::KINDS, Action::VARIANTS),
        ("Observation", Observation::KINDS, Observation::VARIANTS),
        ("Event", Event::KINDS, Event::VARIANTS),
    ] {
        let s = &schemas[union];
        assert_eq!(s["discriminator"]["propertyName"], "kind", "{union}");
        let mapping = s["discriminator"]["mapping"].as_object().unwrap();
        assert_eq!(
            mapping.keys().map(String::as_str).collect::<BTreeSet<_>>(),
            kinds.iter().copied().collect::<BTreeSet<_>>(),
            "{union}"
        );
        let one_of = s["oneOf"].as_array().unwrap();
        assert_eq!(one_of.len(), kinds.len(), "{union}");
        for v in variants {
            let name = (v.name)().into_owned();
            assert_eq!(
                mapping[v.tag],
                format!("#/components/schemas/{name}"),
                "{union}.{}",
                v.tag
            );
            assert!(
                one_of.contains(&json!({"$ref": format!("#/components/schemas/{name}")})),
                "{union} lacks {name}"
            );
            assert!(
                states_its_kind(schemas, &name, v.tag),
                "{name} does not require kind {}: {}",
                v.tag,
                schemas[&name]
            );
        }
    }
    // The events that carry an action or an observation refer to the unions.
    let all_of = |name: &str| schemas[name]["allOf"].clone();
    assert!(named(&all_of("ActionEvent")).contains("Action"));
    assert!(named(&all_of("ObservationEvent")).contains("Observation"));
    assert!(states_its_kind(schemas, "TerminalAction", "TerminalAction"));
    assert!(schemas["TerminalAction"]["properties"]["command"].is_object());
}

#[test]
fn the_ui_snapshot_is_the_current_document() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/openapi.tandem.json");
    let current = openapi_document();
    if std::env::var_os("TANDEM_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let saved = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        saved == current,
        "ui/openapi.tandem.json is stale: run `TANDEM_UPDATE_OPENAPI=1 cargo nextest run -p tandem-server --test openapi` (or `tandem openapi > ui/openapi.tandem.json`), then `npm run -w ui gen:api`, and commit both"
    );
}
