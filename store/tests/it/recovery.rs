//! Restart and crash recovery: objects, the revision counter and the watch
//! history must all come back, and a revision must never be handed out twice.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use store::{Durability, EventKind, Revision};

use crate::support::{next_event, open, take, value};

/// Runs a mixed workload on `store` and returns every event it produced.
async fn workload(store: &store::Store) -> Vec<store::Event> {
    let mut watch = store.watch("", store.revision()).expect("watch");
    let mut writes = 0;
    for i in 0..40 {
        store
            .create(&format!("pods/p{i:02}"), value("v0"))
            .await
            .expect("create");
        writes += 1;
    }
    for i in (0..40).step_by(3) {
        let key = format!("pods/p{i:02}");
        let rev = store.get(&key).expect("get").expect("exists").mod_revision;
        store.update(&key, value("v1"), Some(rev)).await.expect("update");
        writes += 1;
    }
    for i in (0..40).step_by(4) {
        store
            .delete(&format!("pods/p{i:02}"), None)
            .await
            .expect("delete");
        writes += 1;
    }
    take(&mut watch, writes).await
}

#[tokio::test]
async fn restart_keeps_objects_revision_and_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (events, before, mid) = {
        let store = open(Some(dir.path()), Durability::Flush, 100_000);
        let events = workload(&store).await;
        let mid = store.revision() / 2;
        let before = store.list("", None, None).expect("list");
        store.close().await.expect("close");
        (events, before, mid)
    };

    let store = open(Some(dir.path()), Durability::Flush, 100_000);
    let after = store.list("", None, None).expect("list");
    assert_eq!(after.records, before.records);
    assert_eq!(after.revision, before.revision);
    assert_eq!(store.revision(), events.len() as Revision);

    // The whole history replays, and a watch resumes from the middle.
    let mut from_start = store.watch("", 0).expect("watch from 0");
    assert_eq!(take(&mut from_start, events.len()).await, events);
    let mut from_mid = store.watch("pods/", mid).expect("watch from mid");
    assert_eq!(
        take(&mut from_mid, events.len() - mid as usize).await,
        events[mid as usize..]
    );

    // New writes continue the counter, and reach the resumed watch.
    let rec = store.create("pods/new", value("n")).await.expect("create");
    assert_eq!(rec.mod_revision, before.revision + 1);
    assert_eq!(next_event(&mut from_mid).await.revision, rec.mod_revision);
}

#[tokio::test]
async fn reopen_without_close_keeps_flushed_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let acked = {
        let store = open(Some(dir.path()), Durability::Flush, 100_000);
        let mut acked = Vec::new();
        for i in 0..20 {
            acked.push(store.create(&format!("k{i}"), value("x")).await.expect("create"));
        }
        let (_, rev) = store.delete("k0", None).await.expect("delete");
        acked.remove(0);
        assert_eq!(rev, 21);
        acked
        // dropped here without close()
    };
    let store = open(Some(dir.path()), Durability::Flush, 100_000);
    assert_eq!(store.revision(), 21);
    assert_eq!(store.list("", None, None).expect("list").records.len(), 19);
    for record in acked {
        assert_eq!(store.get(&record.key).expect("get"), Some(record));
    }
    let mut watch = store.watch("k0", 0).expect("watch");
    let events = take(&mut watch, 2).await;
    assert_eq!(events[1].kind, EventKind::Deleted);
}

/// Set to a directory, this test binary acts as the crashing child of
/// `kill_9_keeps_every_acknowledged_write`.
const CHILD_DIR: &str = "STORE_CRASH_CHILD_DIR";

/// The child: eight tasks create keys as fast as Flush mode allows and
/// print `ACK <key> <revision>` after each acknowledgement, until killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of kill_9_keeps_every_acknowledged_write"]
async fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let store = open(Some(std::path::Path::new(&dir)), Durability::Flush, 100_000);
    let mut tasks = Vec::new();
    for t in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..100_000 {
                let key = format!("crash/{t}/{i:06}");
                let rec = store.create(&key, vec![b'x'; 512]).await.expect("create");
                println!("ACK {key} {}", rec.mod_revision);
            }
        }));
    }
    for task in tasks {
        task.await.expect("writer");
    }
}

#[tokio::test]
async fn kill_9_keeps_every_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "recovery::crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let mut acked: BTreeMap<String, Revision> = BTreeMap::new();
    let stdout = child.stdout.take().expect("piped stdout");
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read child");
        let mut words = line.split_whitespace();
        if words.next() != Some("ACK") {
            continue;
        }
        let (key, rev) = (words.next().expect("key"), words.next().expect("rev"));
        acked.insert(key.to_string(), rev.parse().expect("revision"));
        if acked.len() == 400 {
            child.kill().expect("kill -9"); // SIGKILL: no destructor runs
            break;
        }
    }
    child.wait().expect("reap child");

    let store = open(Some(dir.path()), Durability::Flush, 100_000);
    let max_acked = acked.values().copied().max().expect("some acks");
    let revision = store.revision();
    assert!(revision >= max_acked, "revision {revision} < acked {max_acked}");
    for (key, rev) in &acked {
        let record = store
            .get(key)
            .expect("get")
            .unwrap_or_else(|| panic!("acked {key} lost"));
        assert_eq!(record.mod_revision, *rev);
    }
    // Everything on disk is whole: the history is exactly the objects' creates.
    let all = store.list("", None, None).expect("list");
    assert_eq!(all.records.len() as Revision, revision);
    let mut watch = store.watch("", 0).expect("watch");
    for (i, event) in take(&mut watch, revision as usize).await.into_iter().enumerate() {
        assert_eq!(event.revision, i as Revision + 1);
        assert_eq!(
            store.get(&event.key).expect("get").map(|r| r.mod_revision),
            Some(event.revision)
        );
    }
    let next = store.create("after-crash", value("y")).await.expect("create");
    assert_eq!(next.mod_revision, revision + 1);
}
