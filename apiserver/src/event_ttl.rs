//! Event expiry: the API server's `--event-ttl` (upstream default 1 h).
//!
//! Upstream the API server writes every Event with an etcd lease of the TTL,
//! renewed by each write of that Event, and etcd removes the key when the
//! lease runs out; watchers see an ordinary DELETED event. Without it a busy
//! cluster keeps every Event it ever recorded.
//!
//! Here one task per Event collection follows the store's writes under its
//! prefix and deletes an Event once `ttl` of simulated time has passed since
//! its last write. The delete carries the revision of that write as a
//! precondition, so an Event written again in the meantime stays.
//!
//! Simplified: lease times are not persisted, so after a restart the Events
//! already in the store count their TTL from the restart; expiry is checked
//! with a granularity of one simulated second (etcd's leases also expire on
//! whole seconds).

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, SystemTime};

use store::{Clock, EventKind, Revision, Store};

use crate::registry::Registry;
use tokio_util::sync::CancellationToken;

/// The store prefixes of the Event collections the registry serves
/// (core/v1 and events.k8s.io/v1).
pub fn event_prefixes(registry: &Registry) -> Vec<String> {
    let mut prefixes: Vec<String> = registry
        .all()
        .iter()
        .filter(|info| info.kind == "Event")
        .map(|info| info.prefix(None))
        .collect();
    prefixes.dedup();
    prefixes
}

/// kube-apiserver's `--event-ttl` default.
pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// Deletes sent together at most.
const EXPIRE_CHUNK: usize = 256;

/// How often, at most, expired Events are looked for (simulated).
const GRANULARITY: Duration = Duration::from_secs(1);

/// When each Event of one collection expires, and at which revision it was last written.
#[derive(Default)]
struct Leases {
    /// key → (expiry in simulated ms since the epoch, revision of the last write).
    by_key: HashMap<String, (u64, Revision)>,
    /// The same leases ordered by expiry.
    by_expiry: BTreeSet<(u64, String)>,
}

impl Leases {
    /// A write of `key` at `revision`, at simulated time `now_ms`: its lease starts again.
    fn written(&mut self, key: &str, revision: Revision, now_ms: u64, ttl: Duration) {
        self.removed(key);
        let expiry = now_ms.saturating_add(ttl.as_millis() as u64);
        self.by_key.insert(key.to_string(), (expiry, revision));
        self.by_expiry.insert((expiry, key.to_string()));
    }

    /// `key` is gone: it has no lease any more.
    fn removed(&mut self, key: &str) {
        if let Some((expiry, _)) = self.by_key.remove(key) {
            self.by_expiry.remove(&(expiry, key.to_string()));
        }
    }

    /// Takes the leases that ran out by `now_ms`: (key, revision of its last write).
    fn expired(&mut self, now_ms: u64) -> Vec<(String, Revision)> {
        let mut out = Vec::new();
        while let Some((expiry, key)) = self.by_expiry.first().cloned() {
            if expiry > now_ms {
                break;
            }
            self.by_expiry.pop_first();
            if let Some((_, revision)) = self.by_key.remove(&key) {
                out.push((key, revision));
            }
        }
        out
    }

    #[cfg(test)]
    /// How many Events hold a lease.
    fn len(&self) -> usize {
        self.by_key.len()
    }

    #[cfg(test)]
    /// Whether no Event holds a lease.
    fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// Expires the Events under `prefix` until `shutdown`.
pub async fn run(store: Store, clock: Clock, prefix: String, ttl: Duration, shutdown: CancellationToken) {
    loop {
        match follow(&store, &clock, &prefix, ttl, &shutdown).await {
            Ok(()) => return,
            // The watch fell behind the history window, or the store hiccuped: start over.
            Err(e) => tracing::info!(%prefix, "event expiry restarts: {e}"),
        }
        if shutdown.is_cancelled() {
            return;
        }
    }
}

/// One list + watch of `prefix`; `Ok` on shutdown or when the store closes.
async fn follow(
    store: &Store,
    clock: &Clock,
    prefix: &str,
    ttl: Duration,
    shutdown: &CancellationToken,
) -> store::Result<()> {
    let mut leases = Leases::default();
    let listed = store.list(prefix, None, None)?;
    let now = millis(clock.now());
    for record in &listed.records {
        leases.written(&record.key, record.mod_revision, now, ttl);
    }
    let mut watch = store.watch(prefix, listed.revision)?;
    // One timer across iterations: a new one per event would never fire
    // while Events are written faster than once per GRANULARITY.
    let mut tick = Box::pin(clock.sleep(GRANULARITY));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            event = watch.next() => match event {
                None => return Ok(()),
                Some(event) => {
                    let event = event?;
                    match event.kind {
                        EventKind::Deleted => leases.removed(&event.key),
                        _ => leases.written(&event.key, event.revision, millis(clock.now()), ttl),
                    }
                }
            },
            _ = &mut tick => {
                expire(store, &mut leases, millis(clock.now())).await?;
                tick = Box::pin(clock.sleep(GRANULARITY));
            }
        }
    }
}

/// Deletes the Events whose lease ran out, each only if unchanged since.
/// The deletes of one round go out together, so that they share flushes
/// (one at a time they fell behind a busy cluster's stream of new Events).
async fn expire(store: &Store, leases: &mut Leases, now_ms: u64) -> store::Result<()> {
    let expired = leases.expired(now_ms);
    for chunk in expired.chunks(EXPIRE_CHUNK) {
        let deletes = chunk
            .iter()
            .map(|(key, revision)| store.delete(key, Some(*revision)));
        for result in futures::future::join_all(deletes).await {
            match result {
                Ok(_) | Err(store::Error::NotFound { .. } | store::Error::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Tasks, TestApi};

    const TTL: Duration = Duration::from_secs(60);

    /// A temporary store on paused time (buffered, the kit's default: a
    /// flush on sled's thread would let paused time run ahead) and the
    /// expiry loop for Event collection `k`, with its key prefix.
    fn expiring(k: usize) -> (Store, Clock, String, Tasks) {
        let clock = Clock::system();
        let store = TestApi::builder().clock(clock.clone()).store();
        let prefix = event_prefixes(&Registry::new())[k].clone();
        let mut tasks = Tasks::new();
        let (s, c, p) = (store.clone(), clock.clone(), prefix.clone());
        tasks.spawn(move |stop| run(s, c, p, TTL, stop));
        (store, clock, prefix, tasks)
    }

    #[test]
    fn a_lease_runs_out_ttl_after_the_last_write() {
        let mut leases = Leases::default();
        leases.written("/e/a", 1, 0, TTL);
        leases.written("/e/b", 2, 10_000, TTL);
        assert!(leases.expired(59_999).is_empty());
        assert_eq!(leases.expired(60_000), vec![("/e/a".to_string(), 1)]);
        // b was written again at 30 s: its lease now ends at 90 s, with the new revision.
        leases.written("/e/b", 5, 30_000, TTL);
        assert!(leases.expired(89_999).is_empty());
        assert_eq!(leases.expired(90_000), vec![("/e/b".to_string(), 5)]);
        assert!(leases.is_empty());
    }

    #[test]
    fn both_event_collections_expire() {
        assert_eq!(
            event_prefixes(&Registry::new()),
            ["/registry/core/events/", "/registry/events.k8s.io/events/"]
        );
    }

    #[test]
    fn a_deleted_event_has_no_lease() {
        let mut leases = Leases::default();
        leases.written("/e/a", 1, 0, TTL);
        leases.removed("/e/a");
        assert_eq!(leases.len(), 0);
        assert!(leases.expired(u64::MAX).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn events_disappear_after_the_ttl_unless_written_again() {
        let (store, clock, prefix, tasks) = expiring(0);
        let old = format!("{prefix}default/old");
        let kept = format!("{prefix}default/kept");
        store.create(&old, b"{}".to_vec()).await.unwrap();
        let rev = store.create(&kept, b"{}".to_vec()).await.unwrap().mod_revision;
        clock.sleep(Duration::from_secs(40)).await;
        store
            .update(&kept, b"{\"count\":2}".to_vec(), Some(rev))
            .await
            .unwrap();
        clock.sleep(Duration::from_secs(30)).await;
        assert!(store.get(&old).unwrap().is_none(), "70 s after its only write");
        assert!(store.get(&kept).unwrap().is_some(), "30 s after its last write");
        clock.sleep(Duration::from_secs(40)).await;
        assert!(store.get(&kept).unwrap().is_none(), "70 s after its last write");
        tasks.stop(Duration::from_secs(10)).await.unwrap();
    }

    // Regression: the expiry timer was re-armed on every incoming Event, so under a steady stream it
    // never fired and Events piled up; apiserver/tests/regressions.rs holds the named case.
    #[tokio::test(start_paused = true)]
    async fn events_expire_while_others_are_written_all_the_time() {
        let (store, clock, prefix, tasks) = expiring(1);
        let old = format!("{prefix}default/old");
        store.create(&old, b"{}".to_vec()).await.unwrap();
        // A write every half GRANULARITY, for longer than the TTL.
        for i in 0..150 {
            store
                .create(&format!("{prefix}default/busy-{i}"), b"{}".to_vec())
                .await
                .unwrap();
            clock.sleep(GRANULARITY / 2).await;
        }
        assert!(store.get(&old).unwrap().is_none(), "75 s after its only write");
        tasks.stop(Duration::from_secs(10)).await.unwrap();
    }
}
