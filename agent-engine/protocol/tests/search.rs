//! The `glob` and `grep` actions and observations: upstream's wire shape, kept unknown fields,
//! and the failure each tool reports.

use serde_json::{Value, json};
use tandem_protocol::tool_io::ToolOutput;
use tandem_protocol::{
    Action, GlobAction, GlobObservation, GrepAction, GrepObservation, Observation,
};

#[test]
fn actions_round_trip_with_their_kinds() {
    let wire = json!({"pattern": "**/*.rs", "path": "/w/src", "future": 1, "kind": "GlobAction"});
    let action: Action = serde_json::from_value(wire.clone()).unwrap();
    let Action::Glob(glob) = &action else {
        panic!("{action:?}")
    };
    assert_eq!(glob.pattern, "**/*.rs");
    assert_eq!(glob.path.as_deref(), Some("/w/src"));
    assert_eq!(serde_json::to_value(&action).unwrap(), wire);

    let grep = Action::Grep(GrepAction {
        pattern: "fn main".into(),
        include: Some("*.{rs,toml}".into()),
        ..Default::default()
    });
    let wire = serde_json::to_value(&grep).unwrap();
    assert_eq!(
        wire,
        json!({"pattern": "fn main", "include": "*.{rs,toml}", "kind": "GrepAction"})
    );
    assert_eq!(serde_json::from_value::<Action>(wire).unwrap(), grep);
    let _ = GlobAction::default();
}

#[test]
fn observations_carry_upstreams_fields() {
    let upstream = json!({
        "content": [{"type": "text", "text": "Found 1 file(s) ...", "cache_prompt": false}],
        "is_error": false,
        "matches": ["/w/a.rs"],
        "pattern": "x",
        "search_path": "/w",
        "include_pattern": null,
        "truncated": false,
        "kind": "GrepObservation"
    });
    let obs: Observation = serde_json::from_value(upstream).unwrap();
    let Observation::Grep(grep) = &obs else {
        panic!("{obs:?}")
    };
    assert_eq!(grep.matches, ["/w/a.rs"]);
    assert_eq!(grep.include_pattern, None);
    assert!(!obs.is_error());
    let back = serde_json::to_value(&obs).unwrap();
    assert!(
        back.get("include_pattern").is_none(),
        "None is left out: {back}"
    );

    let glob = Observation::Glob(GlobObservation {
        files: vec!["/w/b.rs".into()],
        pattern: "*.rs".into(),
        search_path: "/w".into(),
        truncated: true,
        ..Default::default()
    });
    let wire = serde_json::to_value(&glob).unwrap();
    assert_eq!(wire["kind"], "GlobObservation");
    assert_eq!(wire["truncated"], true);
    assert_eq!(serde_json::from_value::<Observation>(wire).unwrap(), glob);
}

#[test]
fn failures_are_errors_with_the_message() {
    let glob = GlobObservation::failure("bad glob".into());
    assert!(glob.is_error && glob.files.is_empty());
    let grep: Observation = GrepObservation::failure("bad regex".into()).into();
    assert!(grep.is_error());
    let text: Vec<Value> = grep
        .content()
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    assert_eq!(text[0]["text"], "bad regex");
}
