//! Helpers shared by the tests.

use std::path::Path;
use std::time::Duration;

use futures::FutureExt;
use store::{Config, Durability, Event, Store, Watch};

/// A config for `path` (`None`: a temporary database) with the given window.
pub fn config(path: Option<&Path>, durability: Durability, history_max_events: usize) -> Config {
    Config {
        path: path.map(Path::to_path_buf),
        durability,
        history_max_events,
        ..Config::default()
    }
}

pub fn open(path: Option<&Path>, durability: Durability, history_max_events: usize) -> Store {
    Store::open(config(path, durability, history_max_events)).expect("open store")
}

/// The next event, failing the test if none comes within 10 s (real time) or
/// the watch reports an error or ends.
pub async fn next_event(watch: &mut Watch) -> Event {
    match tokio::time::timeout(Duration::from_secs(10), watch.next()).await {
        Ok(Some(Ok(event))) => event,
        Ok(other) => panic!("expected an event, got {other:?}"),
        Err(_) => panic!("no event within 10 s"),
    }
}

/// Asserts the watch has nothing to deliver right now.
pub async fn assert_quiet(watch: &mut Watch) {
    // A fresh cooperative budget, so `now_or_never` sees a real answer.
    tokio::task::yield_now().await;
    if let Some(item) = watch.next().now_or_never() {
        panic!("expected no event, got {item:?}");
    }
}

/// Reads `n` events.
pub async fn take(watch: &mut Watch, n: usize) -> Vec<Event> {
    let mut events = Vec::with_capacity(n);
    for _ in 0..n {
        events.push(next_event(watch).await);
    }
    events
}

pub fn value(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}
