//! Conversations sharing a run gate: beyond its slots a run waits its turn, first come first
//! served, saying how many runs are ahead; it never runs twice, and a pause takes it out.

use super::*;
use tandem_sdk::{QUEUE_KEY, RunGate};

fn gated(s: &Setup, gate: &Arc<RunGate>) -> Runtime {
    Runtime {
        run_gate: Some(Arc::clone(gate)),
        ..s.runtime()
    }
}

fn queued_ahead(h: &ConversationHandle) -> Option<u64> {
    h.state()
        .extra
        .get(QUEUE_KEY)
        .and_then(|q| q["ahead"].as_u64())
}

/// A conversation whose one command takes `delay` (it holds its slot that long, unless
/// interrupted), then finishes.
fn slow(delay: Duration) -> Setup {
    Setup::with_delay(
        vec![
            Step::tool_call("terminal", json!({"command": "sleep"})),
            Step::tool_call("finish", json!({"message": "slow"})),
        ],
        delay,
    )
}

/// A conversation that finishes at its first step.
fn quick() -> Setup {
    Setup::new(vec![Step::tool_call("finish", json!({"message": "quick"}))])
}

/// Starts `s`'s conversation on `gate` and waits until its run holds a slot and runs its command.
async fn hold_a_slot(s: &Setup, gate: &Arc<RunGate>) -> ConversationHandle {
    let h = Conversation::create(&s.store, s.options(), gated(s, gate))
        .await
        .unwrap();
    h.send_message(Message::user("go"), true).await.unwrap();
    until("the run to take its command", || {
        !s.ran.lock().unwrap().is_empty()
    })
    .await;
    h
}

async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    for _ in 0..3000 {
        if ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_beyond_the_slots_wait_their_turn_and_start_as_one_frees() {
    let gate = RunGate::new(1);
    // The first run holds the only slot until its command is interrupted.
    let first = slow(Duration::from_secs(600));
    let (second, third) = (quick(), quick());
    let b = Conversation::create(&second.store, second.options(), gated(&second, &gate))
        .await
        .unwrap();
    let c = Conversation::create(&third.store, third.options(), gated(&third, &gate))
        .await
        .unwrap();
    let a = hold_a_slot(&first, &gate).await;
    b.send_message(Message::user("go"), true).await.unwrap();
    c.send_message(Message::user("go"), true).await.unwrap();
    assert_eq!((gate.running(), gate.queued()), (1, 2));
    assert_eq!(queued_ahead(&b), Some(0));
    assert_eq!(queued_ahead(&c), Some(1));
    // Waiting is running as far as the caller knows: it does not start twice.
    assert_eq!(b.status(), ExecutionStatus::Running);
    assert!(b.run_state().borrow().active);
    assert!(matches!(b.run().await, Err(SdkError::AlreadyRunning)));
    assert!(second.server.requests().is_empty(), "b waits: no LLM call");

    // A pause takes a waiting run out of the queue at once; the one behind moves up.
    c.pause().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), c.wait_until_stopped())
        .await
        .expect("a waiting run stops at once when paused");
    assert_eq!(c.status(), ExecutionStatus::Paused);
    assert_eq!(queued_ahead(&c), None);
    assert_eq!(gate.queued(), 1);

    // The slot frees: the first run is interrupted, and the waiting one runs to the end.
    a.interrupt().await.unwrap();
    for h in [&a, &b] {
        tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
            .await
            .unwrap();
    }
    assert_eq!(a.status(), ExecutionStatus::Paused);
    assert_eq!(b.status(), ExecutionStatus::Finished);
    assert_eq!(queued_ahead(&b), None);
    let queue_updates: Vec<Value> = b
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::StateUpdate(u) if u.key == QUEUE_KEY => Some(u.value.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        queue_updates,
        [json!({"ahead": 0}), Value::Null],
        "the log says it waited, and when it started"
    );
    assert_eq!((gate.running(), gate.queued()), (0, 0));

    // The paused one runs when asked, on the free slot.
    c.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), c.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(c.status(), ExecutionStatus::Finished);
    assert_eq!(gate.running(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_waiting_conversation_gives_up_its_place() {
    let gate = RunGate::new(1);
    let (first, second) = (slow(Duration::from_secs(600)), quick());
    let b = Conversation::create(&second.store, second.options(), gated(&second, &gate))
        .await
        .unwrap();
    let a = hold_a_slot(&first, &gate).await;
    b.send_message(Message::user("go"), true).await.unwrap();
    assert_eq!(gate.queued(), 1);
    let id = b.id().to_owned();
    b.close().await.unwrap();
    assert_eq!(gate.queued(), 0);
    a.interrupt().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), a.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(gate.running(), 0);
    // Reopened, it is not waiting any more.
    let (b, _) = Conversation::open(&second.store, &id, gated(&second, &gate))
        .await
        .unwrap();
    assert_eq!(queued_ahead(&b), None);
}
