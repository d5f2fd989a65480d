//! The store's size under churn: the same keys created, updated and
//! deleted many times keep history, object count and disk use bounded.
//!
//! This test has a process of its own on purpose. sled 0.34.7 runs file
//! truncation on its process-wide I/O thread pool, behind log writes that
//! wait for the lock the truncating writer holds; when every pool thread is
//! busy that way the process deadlocks (fixed on sled's main branch by a
//! dedicated truncation thread, spacejam/sled#1269, never released in 0.34).
//! Churn is what makes sled truncate, and sharing the pool with the many
//! databases the other tests open made this test hang once in ~10 runs.
//! In Buffered mode, writes come fast enough for it to hang about one run
//! in six even alone under load (the pool's count of idle threads also
//! underflows, so it never grows out of it); in Flush mode — the server's
//! default — it has not been seen, so this test churns in Flush mode.

use store::{Config, Durability, Store};

#[tokio::test]
async fn churn_keeps_history_objects_and_disk_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(Config {
        path: Some(dir.path().to_path_buf()),
        durability: Durability::Flush,
        history_max_events: 1_000,
        ..Config::default()
    })
    .expect("open");
    let body = vec![b'x'; 2_048];
    let mut sizes = Vec::new();
    for round in 1..=400 {
        for k in 0..25 {
            let key = format!("pods/p{k}");
            store.create(&key, body.clone()).await.expect("create");
            store.update(&key, body.clone(), None).await.expect("update");
            store.delete(&key, None).await.expect("delete");
        }
        let stats = store.stats();
        assert!(
            stats.object_count <= 25 && stats.history_len <= 1_000,
            "{stats:?}"
        );
        if round % 100 == 0 {
            sizes.push(store.size_on_disk().expect("size") / 1024);
        }
    }
    let stats = store.stats();
    assert_eq!(
        (stats.revision, stats.object_count, stats.history_len),
        (30_000, 0, 1_000)
    );
    println!("size on disk (KiB) after 7,500 / 15,000 / 22,500 / 30,000 writes: {sizes:?}");
    // The live data is ~1,000 events of 2-4 KiB. sled's log never shrinks
    // instantly, but it must stop growing with the number of writes.
    assert!(
        sizes[3] < 3 * sizes[1].max(16 * 1024),
        "disk keeps growing: {sizes:?}"
    );
}
