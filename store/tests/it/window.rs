//! The watch window: trimming by count and by age, watchers that fall
//! behind, closing. (Churn has its own test binary: `tests/churn.rs`.)

use std::time::{Duration, SystemTime};

use store::{Clock, Config, Durability, Error, EventKind, Store};

use crate::support::{next_event, open, take, value};

#[tokio::test]
async fn watch_from_before_the_window_is_expired() {
    let store = open(None, Durability::Buffered, 10);
    for i in 0..30 {
        store
            .create(&format!("k{i:02}"), value("v"))
            .await
            .expect("create");
    }
    assert_eq!(store.oldest_watchable(), 20);
    assert_eq!(store.stats().history_len, 10);
    match store.watch("", 19) {
        Err(Error::Expired {
            requested: 19,
            oldest: 20,
        }) => {}
        other => panic!("expected Expired, got {:?}", other.map(|_| ())),
    }
    let mut watch = store.watch("", 20).expect("watch at the window's edge");
    let revisions: Vec<_> = take(&mut watch, 10).await.iter().map(|e| e.revision).collect();
    assert_eq!(revisions, (21..=30).collect::<Vec<_>>());
}

#[tokio::test(start_paused = true)]
async fn history_expires_by_age_on_simulated_time() {
    let epoch = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let store = Store::open(Config {
        durability: Durability::Buffered, // see lib.rs caveats on paused time
        history_max_age: Duration::from_secs(60),
        clock: Clock::starting_at(epoch, 1.0),
        ..Config::default()
    })
    .expect("open");
    for i in 0..5 {
        store
            .create(&format!("old{i}"), value("v"))
            .await
            .expect("create");
    }
    tokio::time::advance(Duration::from_secs(30)).await;
    for i in 0..5 {
        store
            .create(&format!("new{i}"), value("v"))
            .await
            .expect("create");
    }
    assert_eq!(store.oldest_watchable(), 0);

    // 70 s after the first five: they are out of the window, the rest in.
    tokio::time::advance(Duration::from_secs(40)).await;
    assert!(matches!(
        store.watch("", 0),
        Err(Error::Expired {
            requested: 0,
            oldest: 5
        })
    ));
    let mut watch = store.watch("", 5).expect("watch");
    assert_eq!(next_event(&mut watch).await.key, "new0");
    assert_eq!(store.stats().history_len, 5);

    // An idle store expires its history on `compact`.
    tokio::time::advance(Duration::from_secs(61)).await;
    store.compact().expect("compact");
    assert_eq!(store.oldest_watchable(), 10);
    assert_eq!(store.stats().history_len, 0);
    assert_eq!(store.list("", None, None).expect("list").records.len(), 10);
    let mut watch = store.watch("", 10).expect("watch from the head");
    store.create("later", value("v")).await.expect("create");
    assert_eq!(next_event(&mut watch).await.revision, 11);
}

#[tokio::test]
async fn slow_watcher_catches_up_from_history() {
    let store = open(None, Durability::Buffered, 100_000);
    let mut watch = store.watch("k", 0).expect("watch");
    // Far more than the live buffer holds, while the watcher reads nothing.
    for i in 0..3_000 {
        store
            .create(&format!("k{i:05}"), value("v"))
            .await
            .expect("create");
        store
            .create(&format!("other{i:05}"), value("v"))
            .await
            .expect("create");
    }
    for (i, event) in take(&mut watch, 3_000).await.into_iter().enumerate() {
        assert_eq!(event.key, format!("k{i:05}"));
        assert_eq!(event.revision, 2 * i as u64 + 1);
    }
    crate::support::assert_quiet(&mut watch).await;
}

#[tokio::test]
async fn watcher_that_falls_out_of_the_window_is_expired() {
    let store = open(None, Durability::Buffered, 100);
    let mut watch = store.watch("", 0).expect("watch");
    for i in 0..3_000 {
        store
            .create(&format!("k{i:05}"), value("v"))
            .await
            .expect("create");
    }
    match watch.next().await {
        Some(Err(Error::Expired {
            requested: 0,
            oldest: 2_900,
        })) => {}
        other => panic!("expected Expired, got {other:?}"),
    }
    assert!(watch.next().await.is_none(), "an expired watch ends");
}

#[tokio::test]
async fn close_ends_watches_after_committed_events() {
    let store = open(None, Durability::Buffered, 100);
    let mut watch = store.watch("", 0).expect("watch");
    for i in 0..3 {
        store.create(&format!("k{i}"), value("v")).await.expect("create");
    }
    store.close().await.expect("close");
    assert_eq!(take(&mut watch, 3).await.len(), 3);
    assert!(watch.next().await.is_none());
    assert!(matches!(store.create("k9", value("v")).await, Err(Error::Closed)));
    assert!(matches!(store.watch("", 0), Err(Error::Closed)));
    assert_eq!(
        store.get("k0").expect("reads still work").map(|r| r.mod_revision),
        Some(1)
    );
}

#[tokio::test]
async fn deleted_event_carries_last_state() {
    let store = open(None, Durability::Buffered, 100);
    let mut watch = store.watch("", 0).expect("watch");
    store.create("k", value("a")).await.expect("create");
    store.update("k", value("b"), Some(1)).await.expect("update");
    let (last, rev) = store.delete("k", Some(2)).await.expect("delete");
    assert_eq!((last.mod_revision, last.create_revision, rev), (2, 1, 3));
    let events = take(&mut watch, 3).await;
    let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EventKind::Added, EventKind::Modified, EventKind::Deleted]);
    assert_eq!(events[1].prev_value.as_deref(), Some(&b"a"[..]));
    assert_eq!(&*events[2].value, b"b");
    assert_eq!(events[2].prev_value.as_deref(), Some(&b"b"[..]));
}
