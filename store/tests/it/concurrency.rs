//! Racing writers and watchers on a multi-threaded runtime.

use store::{Durability, Revision};

use crate::support::{open, take};

/// Eight writers race (creates, updates with preconditions that sometimes
/// lose, deletes) while watchers start at different moments; every watcher
/// must see exactly the revisions after its start, in order, once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_racing_writers_see_every_revision_once() {
    let store = open(None, Durability::Buffered, 100_000);
    let writers: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..150 {
                    let key = format!("k{}", (t * 7 + i) % 20);
                    let _ = match i % 3 {
                        0 => store.create(&key, vec![t as u8]).await.map(|_| ()),
                        1 => {
                            let rev = store.get(&key).ok().flatten().map(|r| r.mod_revision);
                            store.update(&key, vec![i as u8], rev).await.map(|_| ())
                        }
                        _ => store.delete(&key, None).await.map(|_| ()),
                    };
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    let watchers: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for _ in 0..w * 40 {
                    tokio::task::yield_now().await;
                }
                let after = if w % 2 == 0 { store.revision() } else { 0 };
                (after, store.watch("", after).expect("watch"))
            })
        })
        .collect();
    let mut started = Vec::new();
    for w in watchers {
        started.push(w.await.expect("watcher start"));
    }
    for w in writers {
        w.await.expect("writer");
    }
    let last = store.revision();
    for (after, mut watch) in started {
        let got: Vec<Revision> = take(&mut watch, (last - after) as usize)
            .await
            .iter()
            .map(|e| e.revision)
            .collect();
        assert_eq!(got, (after + 1..=last).collect::<Vec<_>>(), "watch after {after}");
        crate::support::assert_quiet(&mut watch).await;
    }
    // And the final state is what a replay of the full history says.
    let mut state = std::collections::BTreeMap::new();
    let mut replay = store.watch("", 0).expect("watch");
    for e in take(&mut replay, last as usize).await {
        match e.kind {
            store::EventKind::Deleted => state.remove(&e.key),
            _ => state.insert(e.key.clone(), (e.value.clone(), e.revision)),
        };
    }
    let listed = store.list("", None, None).expect("list");
    assert_eq!(listed.revision, last);
    let from_list: std::collections::BTreeMap<_, _> = listed
        .records
        .into_iter()
        .map(|r| (r.key, (r.value, r.mod_revision)))
        .collect();
    assert_eq!(from_list, state);
}
