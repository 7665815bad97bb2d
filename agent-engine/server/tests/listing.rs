//! Every conversation on disk is listed: those upstream wrote without Tandem's catalog entry
//! (`meta.json`) appear in `/api/conversations/search` and `count`, with the entry rebuilt from
//! their state and events and written back.

use crate::harness;

use harness::TestServer;
use serde_json::Value;
use tandem_testkit::fixtures::{copy_dir, upstream_conversations};

const UPSTREAM: &str = "20d68c67c99e4c5aa3b36fb5a8ee2600";
const UPSTREAM_DASHED: &str = "20d68c67-c99e-4c5a-a3b3-6fb5a8ee2600";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upstream_conversation_without_meta_is_searched_and_counted() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("conversations").join(UPSTREAM);
    copy_dir(&upstream_conversations().join(UPSTREAM), &dir).unwrap();
    // As upstream's SDK writes a conversation: no meta.json.
    std::fs::remove_file(dir.join("meta.json")).unwrap();
    let t = TestServer::start_in(home, |_| {}).await;

    let (s, count) = t.get("/api/conversations/count").await;
    assert_eq!((s, count), (200, Value::from(1)));
    let (s, page) = t.get("/api/conversations/search").await;
    assert_eq!(s, 200, "{page}");
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{page}");
    assert_eq!(items[0]["id"], UPSTREAM_DASHED, "{page}");
    // Its creation time is its first event's, not the time of the listing.
    let first: Value = {
        let mut names: Vec<_> = std::fs::read_dir(dir.join("events"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        serde_json::from_slice(&std::fs::read(&names[0]).unwrap()).unwrap()
    };
    let created = items[0]["created_at"].as_str().unwrap();
    let first_time = first["timestamp"].as_str().unwrap();
    assert!(
        created.starts_with(&first_time[..19]),
        "{created} vs {first_time}"
    );
    // The rebuilt entry was written back, and the conversation still opens with its events.
    assert!(dir.join("meta.json").is_file());
    let events = t.events(UPSTREAM_DASHED).await;
    assert_eq!(events.len(), 17);

    // A conversation made here is listed beside it.
    let llm = harness::llm(vec![]);
    let own = t.create(&llm, serde_json::json!({})).await;
    let (_, count) = t.get("/api/conversations/count").await;
    assert_eq!(count, Value::from(2));
    let (_, page) = t.get("/api/conversations/search").await;
    let ids: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&own.as_str()) && ids.contains(&UPSTREAM_DASHED),
        "{ids:?}"
    );
}
