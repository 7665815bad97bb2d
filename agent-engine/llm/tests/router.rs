//! Routers are LLMs: the multimodal router by content and context window, round-robin and
//! seeded random spreading, and the fallback router with its cool-down.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tandem_llm::{
    FallbackRouter, Llm, LlmError, LlmRequest, LlmResponse, MultimodalRouter, OpenAiChat,
    RandomRouter, Result, RoundRobinRouter,
};
use tandem_protocol::{Content, ImageContent, LlmConfig, Message, Role, TokenUsage};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio_util::sync::CancellationToken;

/// An in-process model answering from a queue of outcomes (text when the queue is empty) and
/// counting its calls.
struct FakeLlm {
    config: LlmConfig,
    script: Mutex<VecDeque<Result<String>>>,
    calls: Mutex<usize>,
}

impl FakeLlm {
    fn new(model: &str) -> Arc<Self> {
        Self::scripted(model, Vec::new())
    }

    fn scripted(model: &str, script: Vec<Result<String>>) -> Arc<Self> {
        Arc::new(Self {
            config: LlmConfig::new(model),
            script: Mutex::new(script.into()),
            calls: Mutex::new(0),
        })
    }

    fn calls(&self) -> usize {
        *self.calls.lock().unwrap()
    }
}

impl Llm for FakeLlm {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        _request: LlmRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        *self.calls.lock().unwrap() += 1;
        let next = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Ok(format!("from {}", self.config.model)));
        Box::pin(async move {
            let text = next?;
            Ok(LlmResponse {
                id: "resp".into(),
                model: String::new(),
                message: Message::assistant(text),
                finish_reason: Some("stop".into()),
                usage: TokenUsage::default(),
                cost: 0.0,
                latency: Duration::ZERO,
            })
        })
    }
}

fn text_request(text: &str) -> LlmRequest {
    LlmRequest {
        messages: vec![Message::user(text)],
        ..LlmRequest::default()
    }
}

fn image_request() -> LlmRequest {
    let message = Message::new(
        Role::User,
        vec![
            Content::text("what is in this picture?"),
            Content::Image(ImageContent {
                image_urls: vec!["data:image/png;base64,AAAA".into()],
                ..ImageContent::default()
            }),
        ],
    );
    LlmRequest {
        messages: vec![message],
        ..LlmRequest::default()
    }
}

async fn served(llm: &dyn Llm, request: LlmRequest) -> String {
    let response = llm
        .completion(request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        response.usage.model, response.model,
        "usage names the serving model"
    );
    response.model
}

fn unavailable() -> LlmError {
    LlmError::ServiceUnavailable {
        status: 503,
        message: "down".into(),
    }
}

#[tokio::test]
async fn multimodal_router_sends_images_to_the_vision_model() {
    let vision = FakeLlm::new("openai/gpt-4o");
    let text = FakeLlm::new("deepseek/deepseek-chat");
    let router = MultimodalRouter::new(vision.clone(), text.clone());
    assert_eq!(router.config().model, "openai/gpt-4o");
    assert_eq!(
        served(&router, text_request("hi")).await,
        "deepseek/deepseek-chat"
    );
    assert_eq!(served(&router, image_request()).await, "openai/gpt-4o");
    assert_eq!((vision.calls(), text.calls()), (1, 1));

    // Too long for the text model's context window (128k tokens in the table) → vision model.
    let long = "lorem ipsum dolor sit amet ".repeat(30_000);
    assert_eq!(served(&router, text_request(&long)).await, "openai/gpt-4o");
}

#[tokio::test]
async fn multimodal_router_through_real_clients() {
    let vision_server = ScriptedLlmServer::start(vec![Step::text("a cat")]);
    let text_server = ScriptedLlmServer::start(vec![Step::text("hello")]);
    let client = |model: &str, server: &ScriptedLlmServer| -> Arc<dyn Llm> {
        Arc::new(OpenAiChat::new(server.llm_config(model)).unwrap())
    };
    let router = MultimodalRouter::new(
        client("openai/vision", &vision_server),
        client("openai/text", &text_server),
    );
    let reply = router
        .completion(image_request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "a cat");
    assert_eq!(reply.usage.model, "openai/vision");
    let reply = router
        .completion(text_request("hi"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "hello");
    assert_eq!(reply.usage.model, "openai/text");
    assert_eq!(
        (vision_server.request_count(), text_server.request_count()),
        (1, 1)
    );
}

#[tokio::test]
async fn round_robin_cycles() {
    let llms: Vec<Arc<dyn Llm>> = vec![FakeLlm::new("a"), FakeLlm::new("b"), FakeLlm::new("c")];
    let router = RoundRobinRouter::new(llms).unwrap();
    let mut order = Vec::new();
    for _ in 0..7 {
        order.push(served(&router, text_request("x")).await);
    }
    assert_eq!(order, ["a", "b", "c", "a", "b", "c", "a"]);
    assert!(matches!(
        RoundRobinRouter::new(Vec::new()),
        Err(LlmError::Config(_))
    ));
}

#[tokio::test]
async fn random_router_is_deterministic_per_seed() {
    let make = |seed| {
        let llms: Vec<Arc<dyn Llm>> = vec![FakeLlm::new("a"), FakeLlm::new("b"), FakeLlm::new("c")];
        RandomRouter::new(llms, seed).unwrap()
    };
    let draw = |router: &RandomRouter| (0..50).map(|_| router.pick()).collect::<Vec<_>>();
    let (one, two, other) = (make(7), make(7), make(8));
    let first = draw(&one);
    assert_eq!(first, draw(&two));
    assert_ne!(first, draw(&other));
    for model in 0..3 {
        assert!(first.contains(&model), "every model gets calls: {first:?}");
    }
    let router = make(7);
    let expected = ["a", "b", "c"][make(7).pick()];
    assert_eq!(served(&router, text_request("x")).await, expected);
}

#[tokio::test(start_paused = true)]
async fn fallback_moves_on_and_remembers_failures() {
    let primary = FakeLlm::scripted("primary", vec![Err(unavailable())]);
    let backup = FakeLlm::new("backup");
    let router = FallbackRouter::new(vec![primary.clone(), backup.clone()])
        .unwrap()
        .with_cooldown(Duration::from_secs(30));

    assert_eq!(served(&router, text_request("1")).await, "backup");
    assert_eq!((primary.calls(), backup.calls()), (1, 1));
    // The primary sits out its cool-down.
    assert_eq!(router.order(), [1, 0]);
    assert_eq!(served(&router, text_request("2")).await, "backup");
    assert_eq!((primary.calls(), backup.calls()), (1, 2));
    // After the cool-down it is tried first again, and works.
    tokio::time::advance(Duration::from_secs(31)).await;
    assert_eq!(router.order(), [0, 1]);
    assert_eq!(served(&router, text_request("3")).await, "primary");
    assert_eq!((primary.calls(), backup.calls()), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn fallback_on_auth_errors_but_not_on_bad_requests() {
    let auth = FakeLlm::scripted(
        "a",
        vec![Err(LlmError::Auth {
            status: 401,
            message: "bad key".into(),
        })],
    );
    let router = FallbackRouter::new(vec![auth, FakeLlm::new("b")]).unwrap();
    assert_eq!(served(&router, text_request("x")).await, "b");

    let bad = FakeLlm::scripted(
        "a",
        vec![Err(LlmError::BadRequest {
            status: 400,
            message: "no".into(),
        })],
    );
    let second = FakeLlm::new("b");
    let router = FallbackRouter::new(vec![bad, second.clone()]).unwrap();
    let err = router
        .completion(text_request("x"), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::BadRequest { .. }));
    assert_eq!(second.calls(), 0);
    assert_eq!(
        router.order(),
        [0, 1],
        "a bad request does not mark the model failed"
    );
}

#[tokio::test(start_paused = true)]
async fn fallback_reports_the_last_error_when_all_fail_and_retries_cooling_models() {
    let a = FakeLlm::scripted("a", vec![Err(unavailable()), Ok("a is back".into())]);
    let b = FakeLlm::scripted("b", vec![Err(LlmError::Timeout(Duration::from_secs(1)))]);
    let router = FallbackRouter::new(vec![a.clone(), b.clone()]).unwrap();
    let err = router
        .completion(text_request("x"), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
    // Both cool down; the next call still tries them (soonest back first) instead of failing.
    let reply = router
        .completion(text_request("y"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "a is back");
    assert_eq!((a.calls(), b.calls()), (2, 1));
}

#[tokio::test]
async fn fallback_through_real_clients_after_their_retries() {
    let down = ScriptedLlmServer::start(vec![
        Step::error(503, "overloaded"),
        Step::error(503, "overloaded"),
    ]);
    let up = ScriptedLlmServer::start(vec![Step::text("served by the backup")]);
    let client = |model: &str, server: &ScriptedLlmServer| -> Arc<dyn Llm> {
        let config = LlmConfig {
            num_retries: 1,
            ..server.llm_config(model)
        };
        Arc::new(OpenAiChat::new(config).unwrap())
    };
    let router = FallbackRouter::new(vec![
        client("openai/main", &down),
        client("openai/backup", &up),
    ])
    .unwrap();
    let reply = router
        .completion(text_request("hi"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text(), "served by the backup");
    assert_eq!(reply.usage.model, "openai/backup");
    assert_eq!(down.request_count(), 2, "the primary's own retry ran first");
}
