//! Edit-and-approve, and reasoning items carried across turns.

use super::*;

/// The pending actions' ids, in order: actions with no observation, rejection or error yet.
fn pending_ids(events: &[Event]) -> Vec<String> {
    let answered: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Observation(o) => Some(o.action_id.clone()),
            Event::UserReject(r) => Some(r.action_id.clone()),
            Event::AgentError(a) => Some(a.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    events
        .iter()
        .filter_map(|e| match e {
            Event::Action(a)
                if !answered.contains(&a.base.id) && !answered.contains(&a.tool_call_id) =>
            {
                Some(a.base.id.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_approve_runs_the_edited_action_in_place_of_the_original() {
    let s = Setup::with_shell(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "touch original.txt", "security_risk": "LOW"}),
        ),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    let h = s.start(options).await;
    run_to_stop(&h, "make a file").await;
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    let pending = pending_ids(&h.events());
    assert_eq!(pending.len(), 1);
    let id = &pending[0];

    // Arguments the tool rejects: the error names the field, and nothing runs or changes.
    let bad = h.approve_edited(id, json!({"command": 5})).await;
    let Err(SdkError::InvalidArguments(message)) = bad else {
        panic!("{bad:?}")
    };
    let message = message.to_string();
    assert!(message.contains("`command`"), "{message}");
    let bad = h.approve_edited(id, json!(["touch edited.txt"])).await;
    assert!(
        matches!(&bad, Err(SdkError::InvalidArguments(m)) if m.to_string().contains("JSON object")),
        "{bad:?}"
    );
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    assert_eq!(pending_ids(&h.events()), pending);
    // An id that does not wait.
    let unknown = h
        .approve_edited("no-such-action", json!({"command": "true"}))
        .await;
    assert!(
        matches!(unknown, Err(SdkError::NotPending(_))),
        "{unknown:?}"
    );
    assert!(s.ran.lock().unwrap().is_empty());

    let risk = h
        .approve_edited(id, json!({"command": "touch edited.txt"}))
        .await
        .unwrap();
    // Re-rated by the rule analyzer (it writes a file); the model's LOW was about the original.
    assert_eq!(risk, SecurityRisk::Medium);
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["touch edited.txt"]);
    assert!(s.workspace.path().join("edited.txt").exists());
    assert!(
        !s.workspace.path().join("original.txt").exists(),
        "the original command never ran"
    );

    // The observation answers the original action, with the note in front of the output.
    let events = h.events();
    let Some(Event::Action(original)) = events
        .iter()
        .find(|e| matches!(e, Event::Action(a) if &a.base.id == id))
    else {
        panic!()
    };
    let observation = events
        .iter()
        .find_map(|e| match e {
            Event::Observation(o) if o.tool_name == "terminal" => Some(o),
            _ => None,
        })
        .unwrap();
    assert_eq!(&observation.action_id, id);
    assert_eq!(observation.tool_call_id, original.tool_call_id);
    let content = observation.observation.content();
    let text = content[0].as_text().unwrap();
    assert!(
        text.starts_with(
            "[The person edited this action before it ran; it ran as: $ touch edited.txt]\nran touch edited.txt"
        ),
        "{text}"
    );
    // The action event still holds what the model asked for; only its result says otherwise.
    assert_eq!(
        original.tool_call.arguments,
        json!({"command": "touch original.txt", "security_risk": "LOW"}).to_string()
    );

    // The model's next request carries that result as the answer to its call.
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2);
    let tool_message = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_message["tool_call_id"], original.tool_call_id.as_str());
    assert!(
        tool_message["content"]
            .to_string()
            .contains("it ran as: $ touch edited.txt"),
        "{tool_message}"
    );
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
    // Once run, it is not pending any more.
    let again = h.approve_edited(id, json!({"command": "true"})).await;
    assert!(matches!(again, Err(SdkError::NotPending(_))), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_one_of_several_pending_actions_leaves_the_others_waiting() {
    let s = Setup::with_shell(vec![
        Step::tool_calls(vec![
            ToolCallSpec::new("terminal", json!({"command": "touch first.txt"})),
            ToolCallSpec::new("terminal", json!({"command": "touch second.txt"})),
        ]),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    let h = s.start(options).await;
    run_to_stop(&h, "two files").await;
    let pending = pending_ids(&h.events());
    assert_eq!(pending.len(), 2);

    h.approve_edited(&pending[1], json!({"command": "touch second-edited.txt"}))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    // Only the edited one ran; the first still waits, and the model was not asked yet.
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    assert_eq!(*s.ran.lock().unwrap(), ["touch second-edited.txt"]);
    assert_eq!(pending_ids(&h.events()), [pending[0].clone()]);
    assert_eq!(s.server.requests().len(), 1);

    // The first keeps its own approval: approving it runs it, then the loop goes on.
    h.respond_to_confirmation(true, None).await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(
        *s.ran.lock().unwrap(),
        ["touch second-edited.txt", "touch first.txt"]
    );
    assert!(!s.workspace.path().join("second.txt").exists());
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_command_gets_its_secrets_and_they_are_masked_in_its_result() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "deploy"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    options.secrets = vec![(
        "DEPLOY_TOKEN".into(),
        SecretSource::Static {
            value: "tok-789-secret".into(),
            description: None,
        },
    )];
    let h = s.start(options).await;
    run_to_stop(&h, "deploy").await;
    let id = pending_ids(&h.events()).remove(0);
    // The person's command names the secret (the agent's did not) and spells its value out.
    h.approve_edited(
        &id,
        json!({"command": "deploy --token $DEPLOY_TOKEN --check tok-789-secret"}),
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(
        *s.env_seen.lock().unwrap(),
        [("DEPLOY_TOKEN".to_owned(), "tok-789-secret".to_owned())]
    );
    let events = h.events();
    let observation = events
        .iter()
        .find_map(|e| match e {
            Event::Observation(o) if o.action_id == id => Some(o),
            _ => None,
        })
        .unwrap();
    let text = observation.observation.content()[0]
        .as_text()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("[The person edited this action before it ran; it ran as: $ deploy --token $DEPLOY_TOKEN --check "),
        "{text}"
    );
    for e in &events {
        let j = serde_json::to_string(e).unwrap();
        assert!(!j.contains("tok-789-secret"), "{j}");
    }
    let all_requests = serde_json::to_string(&s.server.requests()).unwrap();
    assert!(!all_requests.contains("tok-789-secret"));
    assert!(all_requests.contains("it ran as: $ deploy --token $DEPLOY_TOKEN"));
}

/// The Responses reasoning items sent back in a request's `input`, as `(position, id,
/// encrypted_content)`.
fn reasoning_items(request: &Value) -> Vec<(usize, String, String)> {
    request["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, item)| item["type"] == "reasoning")
        .map(|(i, item)| {
            (
                i,
                item["id"].as_str().unwrap().to_owned(),
                item["encrypted_content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_reasoning_items_go_back_on_later_turns_and_survive_a_reopen() {
    use tandem_testkit::Reply;
    let reasoned = |summary: &str, encrypted: &str, reply: Reply| {
        Step::Reply(Reply {
            reasoning: Some(summary.into()),
            encrypted_reasoning: Some(encrypted.into()),
            ..reply
        })
    };
    // Turn 1: reasoning, then two calls in one response; then a text reply with its own
    // reasoning; later turns are plain text.
    let s = Setup::new(vec![
        reasoned(
            "List, then print.",
            "ENC-one",
            Reply::tool_calls(vec![
                ToolCallSpec::new("terminal", json!({"command": "ls"})),
                ToolCallSpec::new("terminal", json!({"command": "pwd"})),
            ]),
        ),
        reasoned("Report.", "ENC-two", Reply::text("All done.")),
        Step::text("Still here."),
        Step::text("After the reopen."),
    ]);
    // A reasoning model whose configuration sets no reasoning effort.
    let runtime = || {
        let mut config = LlmConfig::new("openai/gpt-5");
        config.base_url = Some(s.server.base_url());
        config.api_key = Some("sk-test".into());
        config.num_retries = 0;
        assert_eq!(config.reasoning_effort, None);
        Runtime {
            llm: Arc::new(tandem_llm::OpenAiResponses::new(config).unwrap()),
            tools: vec![s.tool.clone(), Arc::new(FinishTool::new())],
            checkpoints: None,
            run_gate: None,
        }
    };
    let h = Conversation::create(&s.store, s.options(), runtime())
        .await
        .unwrap();
    run_to_stop(&h, "where am I?").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["ls", "pwd"]);

    // The first action of the response carries its reasoning item (as upstream records it);
    // the agent's text reply carries its own.
    let events = h.events();
    let actions: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Action(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(actions.len(), 2);
    let first_item = actions[0].responses_reasoning_item.clone().unwrap();
    assert_eq!(first_item["id"], "rs_scripted_0000");
    assert_eq!(first_item["encrypted_content"], "ENC-one");
    assert_eq!(first_item["summary"], json!(["List, then print."]));
    assert_eq!(actions[1].responses_reasoning_item, None);
    let reply = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Message(m) if m.llm_message.role == tandem_protocol::Role::Assistant => Some(m),
            _ => None,
        })
        .unwrap();
    let reply_item = reply.llm_message.responses_reasoning_item.clone().unwrap();
    assert_eq!(reply_item["encrypted_content"], "ENC-two");

    // Turn 2's request: the item, with its encrypted content, right before the calls it led to.
    let requests = s.server.requests();
    for request in &requests {
        assert_eq!(request["reasoning"], json!({"effort": "high"}));
        assert_eq!(request["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(request["store"], false);
    }
    let second = &requests[1];
    assert_eq!(
        reasoning_items(second),
        [(1, "rs_scripted_0000".into(), "ENC-one".into())]
    );
    let input = second["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(input[2]["id"], "fc_scripted_0000_0");
    assert_eq!(input[3]["id"], "fc_scripted_0000_1");

    // The next user turn sends both items back: one before the calls, one before the text.
    run_to_stop(&h, "and now?").await;
    let third = &s.server.requests()[2];
    let items = reasoning_items(third);
    assert_eq!(
        items
            .iter()
            .map(|(_, id, enc)| (id.as_str(), enc.as_str()))
            .collect::<Vec<_>>(),
        [
            ("rs_scripted_0000", "ENC-one"),
            ("rs_scripted_0001", "ENC-two")
        ]
    );
    let after = &third["input"][items[1].0 + 1];
    assert_eq!(after["role"], "assistant");
    assert_eq!(after["content"][0]["text"], "All done.");

    // Persisted: the items are in the event files, and a reopened conversation sends them back.
    let dir = h.dir().to_path_buf();
    let id = h.id().to_owned();
    h.close().await.unwrap();
    let on_disk: String = walk(&dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(on_disk.contains("ENC-one") && on_disk.contains("ENC-two"));
    let mut attempt = 0;
    let h = loop {
        match Conversation::open(&s.store, &id, runtime()).await {
            Ok((h, _)) => break h,
            // The closed actor releases the log's lock just after answering `close`.
            Err(e) if attempt < 100 => {
                attempt += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    run_to_stop(&h, "once more").await;
    let fourth = &s.server.requests()[3];
    assert_eq!(
        reasoning_items(fourth)
            .iter()
            .map(|(_, id, enc)| (id.as_str(), enc.as_str()))
            .collect::<Vec<_>>(),
        [
            ("rs_scripted_0000", "ENC-one"),
            ("rs_scripted_0001", "ENC-two")
        ]
    );
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
}
