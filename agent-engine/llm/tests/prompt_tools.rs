//! Prompt-based tool calling: the request carries the tools in the system prompt and the
//! history as text, the reply's calls come back typed, and malformed calls come back as calls
//! whose arguments fail the agent's check.

use serde_json::{Value, json};
use tandem_llm::prompt_tools::{
    MALFORMED_PREFIX, convert_request, needs_prompt_tools, parse_reply, render_call, tools_prompt,
};
use tandem_llm::{Llm, LlmRequest, OpenAiChat, PromptToolCalling};
use tandem_protocol::{Content, LlmConfig, Message, MessageToolCall, Role};
use tandem_testkit::{Reply, ScriptedLlmServer, Step};
use tokio_util::sync::CancellationToken;

fn tools() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {
            "name": "terminal",
            "description": "Run a bash command.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "description": "The command."},
                "timeout": {"type": "number"},
                "is_input": {"type": "boolean"},
            }, "required": ["command"]},
        }}),
        json!({"type": "function", "function": {
            "name": "file_editor",
            "description": "View and edit files.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "enum": ["view", "create", "str_replace"]},
                "path": {"type": "string"},
                "view_range": {"type": ["array", "null"], "items": {"type": "integer"}},
                "insert_line": {"type": "integer"},
                "options": {"anyOf": [{"type": "object"}, {"type": "null"}]},
            }, "required": ["command", "path"]},
        }}),
    ]
}

fn args(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap()
}

#[test]
fn the_prompt_describes_every_tool_with_an_example() {
    let prompt = tools_prompt(&tools());
    assert!(prompt.contains("<function=TOOL_NAME>"));
    assert!(prompt.contains("### terminal"));
    assert!(prompt.contains("- `command` (string, required): The command."));
    assert!(prompt.contains("- `timeout` (number, optional)"));
    assert!(prompt.contains("One of: view, create, str_replace."));
    assert!(
        prompt.contains("<function=terminal>\n<parameter=command>ls -la</parameter>\n</function>")
    );
}

#[test]
fn calls_are_typed_from_the_schema() {
    let text = "Let me look.\n<function=file_editor>\n<parameter=command>view</parameter>\n\
                <parameter=path>/w/a.py</parameter>\n<parameter=view_range>[1, 20]</parameter>\n\
                <parameter=insert_line>3</parameter>\n<parameter=options>{\"a\": 1}</parameter>\n</function>";
    let reply = parse_reply(text, &tools(), false);
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(reply.calls.len(), 1);
    assert_eq!(reply.calls[0].name, "file_editor");
    assert_eq!(
        args(&reply.calls[0].arguments),
        json!({"command": "view", "path": "/w/a.py", "view_range": [1, 20], "insert_line": 3, "options": {"a": 1}})
    );

    let text = "<function=terminal>\n<parameter=command>\nfor i in 1 2; do\n  echo \"$i\"\ndone\n</parameter>\n\
                <parameter=timeout>2.5</parameter>\n<parameter=is_input>False</parameter>\n</function>";
    let call = &parse_reply(text, &tools(), false).calls[0];
    assert_eq!(
        args(&call.arguments),
        json!({"command": "for i in 1 2; do\n  echo \"$i\"\ndone", "timeout": 2.5, "is_input": false})
    );
}

#[test]
fn a_call_cut_by_the_stop_sequence_is_complete() {
    let reply = parse_reply(
        "ok\n<function=terminal>\n<parameter=command>ls</parameter>\n",
        &tools(),
        false,
    );
    assert_eq!(args(&reply.calls[0].arguments), json!({"command": "ls"}));
    assert!(!reply.calls[0].is_malformed());
}

#[test]
fn malformed_calls_are_kept_with_the_reason() {
    let cases = [
        (
            "<function=terminal>\n<parameter=command>ls\n</function>",
            false,
            "parameter `command` is not closed",
        ),
        (
            "<function=terminal>\n<parameter=cmd>ls</parameter>\n</function>",
            false,
            "`terminal` has no parameter `cmd`",
        ),
        (
            "<function=file_editor>\n<parameter=command>view</parameter>\n<parameter=path>/a</parameter>\n<parameter=view_range>[1, 2</parameter>\n</function>",
            false,
            "parameter `view_range` must be a JSON array",
        ),
        (
            "<function=terminal>\n<parameter=timeout>soon</parameter>\n</function>",
            false,
            "parameter `timeout` must be a number",
        ),
        (
            "<function=terminal>\n<parameter=command>ls</parameter>\n",
            true,
            "not closed with </function>",
        ),
        (
            "<function=terminal\n<parameter=command>ls</parameter>\n</function>",
            false,
            "tag is not closed with >",
        ),
    ];
    for (text, truncated, reason) in cases {
        let reply = parse_reply(text, &tools(), truncated);
        assert_eq!(reply.calls.len(), 1, "{text}");
        let call = &reply.calls[0];
        assert!(call.is_malformed(), "{text}");
        assert!(call.arguments.starts_with(MALFORMED_PREFIX));
        assert!(call.arguments.contains(reason), "{}", call.arguments);
        assert!(
            serde_json::from_str::<Value>(&call.arguments).is_err(),
            "the agent's JSON check must fail"
        );
    }
    // Two calls where the first is not closed: both kept, the first malformed.
    let reply = parse_reply(
        "<function=terminal>\n<parameter=command>a</parameter>\n<function=terminal>\n<parameter=command>b</parameter>\n</function>",
        &tools(),
        false,
    );
    assert_eq!(reply.calls.len(), 2);
    assert!(reply.calls[0].is_malformed());
    assert_eq!(args(&reply.calls[1].arguments), json!({"command": "b"}));
}

#[test]
fn text_without_calls_is_left_alone() {
    let reply = parse_reply("All done, nothing to run.", &tools(), false);
    assert!(reply.calls.is_empty());
    assert_eq!(reply.text, "All done, nothing to run.");
}

#[test]
fn rendering_and_parsing_round_trip() {
    let call = MessageToolCall {
        id: "call_1".into(),
        name: "file_editor".into(),
        arguments:
            json!({"command": "create", "path": "/w/x.txt", "view_range": [1, 2], "insert_line": 4})
                .to_string(),
        origin: "completion".into(),
        ..MessageToolCall::default()
    };
    let text = render_call(&call);
    let parsed = parse_reply(&text, &tools(), false);
    assert_eq!(args(&parsed.calls[0].arguments), args(&call.arguments));
}

#[test]
fn history_becomes_text() {
    let mut assistant = Message::new(Role::Assistant, vec![Content::text("Listing.")]);
    assistant.tool_calls = Some(vec![MessageToolCall {
        id: "call_1".into(),
        name: "terminal".into(),
        arguments: r#"{"command":"ls"}"#.into(),
        origin: "completion".into(),
        ..MessageToolCall::default()
    }]);
    let request = LlmRequest {
        messages: vec![
            Message::system("You are helpful."),
            Message::user("list files"),
            assistant,
            Message::tool("call_1", "terminal", vec![Content::text("a.txt")]),
        ],
        tools: tools(),
        ..LlmRequest::default()
    };
    let converted = convert_request(request);
    assert!(converted.tools.is_empty());
    assert_eq!(converted.messages.len(), 4);
    assert!(converted.messages[0].text().contains("# Calling tools"));
    assert_eq!(converted.messages[2].role, Role::Assistant);
    assert!(converted.messages[2].tool_calls.is_none());
    assert_eq!(
        converted.messages[2].text(),
        "Listing.\n<function=terminal>\n<parameter=command>ls</parameter>\n</function>"
    );
    assert_eq!(converted.messages[3].role, Role::User);
    assert_eq!(
        converted.messages[3].text(),
        "EXECUTION RESULT of [terminal]:\na.txt"
    );
}

#[test]
fn which_models_need_prompt_tools() {
    assert!(needs_prompt_tools(&LlmConfig::new(
        "deepseek/deepseek-reasoner"
    )));
    assert!(!needs_prompt_tools(&LlmConfig::new("openai/gpt-5")));
    let mut config = LlmConfig::new("openai/gpt-5");
    config.native_tool_calling = Some(false);
    assert!(needs_prompt_tools(&config));
}

fn client(server: &ScriptedLlmServer) -> PromptToolCalling<OpenAiChat> {
    let config = LlmConfig {
        native_tool_calling: Some(false),
        ..server.llm_config("openai/no-tools-model")
    };
    PromptToolCalling::new(OpenAiChat::new(config).unwrap())
}

#[tokio::test]
async fn round_trip_against_the_scripted_server() {
    let server = ScriptedLlmServer::start(vec![
        Step::text(
            "I'll list the files.\n<function=terminal>\n<parameter=command>ls -la</parameter>\n<parameter=timeout>10</parameter>\n",
        ),
        Step::text("<function=terminal>\n<parameter=command>cat a.txt\n"),
        Step::Reply(Reply {
            text: Some("The folder holds a.txt.".into()),
            ..Reply::default()
        }),
    ]);
    let llm = client(&server);
    let mut messages = vec![
        Message::system("You are a coding agent."),
        Message::user("what is here?"),
    ];

    let first = llm
        .completion(
            LlmRequest {
                messages: messages.clone(),
                tools: tools(),
                ..LlmRequest::default()
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let calls = first.message.tool_calls.clone().unwrap();
    assert_eq!(first.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(first.message.text(), "I'll list the files.");
    assert_eq!(calls.len(), 1);
    assert!(calls[0].id.starts_with("call_"));
    assert_eq!(
        args(&calls[0].arguments),
        json!({"command": "ls -la", "timeout": 10})
    );
    let sent = server.last_request().unwrap();
    assert!(sent.get("tools").is_none(), "no tools on the wire: {sent}");
    let system = sent["messages"][0]["content"].to_string();
    assert!(system.contains("### terminal"), "{system}");

    messages.push(first.message.clone());
    messages.push(Message::tool(
        &calls[0].id,
        "terminal",
        vec![Content::text("a.txt")],
    ));
    let second = llm
        .completion(
            LlmRequest {
                messages: messages.clone(),
                tools: tools(),
                ..LlmRequest::default()
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let sent = server.last_request().unwrap();
    let history: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(history, ["system", "user", "assistant", "user"]);
    assert!(
        sent["messages"][3]["content"]
            .to_string()
            .contains("EXECUTION RESULT of [terminal]")
    );
    // The stop sequence cannot explain an unclosed parameter: this call is malformed.
    let bad = second.message.tool_calls.clone().unwrap();
    assert!(bad[0].arguments.starts_with(MALFORMED_PREFIX));

    // The malformed call goes back as the model wrote it, and its result says what was wrong.
    messages.push(second.message.clone());
    messages.push(Message::tool(
        &bad[0].id,
        "terminal",
        vec![Content::text("Error validating tool 'terminal'")],
    ));
    let third = llm
        .completion(
            LlmRequest {
                messages,
                tools: tools(),
                ..LlmRequest::default()
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(third.message.tool_calls.is_none());
    assert_eq!(third.message.text(), "The folder holds a.txt.");
    let sent = server.last_request().unwrap();
    let last = sent["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(last.contains("is not closed with </parameter>"), "{last}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[tokio::test]
async fn requests_without_tools_pass_through() {
    let server = ScriptedLlmServer::start(vec![Step::text(
        "<function=terminal> is how I would call it",
    )]);
    let llm = client(&server);
    let reply = llm
        .completion(
            LlmRequest {
                messages: vec![Message::user("title please")],
                ..LlmRequest::default()
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(reply.message.tool_calls.is_none());
    assert_eq!(
        server.last_request().unwrap()["messages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
