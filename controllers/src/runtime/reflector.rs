//! The reflector: list, then watch from the list's resourceVersion, and
//! hand every object to a [`Sink`] (client-go
//! `tools/cache/reflector.go`, `ListAndWatch`).
//!
//! ```text
//! list ──▶ sink.replace(items) ──▶ watch from rv ──▶ sink.upsert / sink.delete ...
//!   ▲                                  │ stream ended or failed: watch again from the last rv
//!   └──── 410 Expired: list again ◀────┘ (growing pause if it keeps happening)
//! ```
//!
//! The informer's cache ([`super::informer`]) and the garbage collector's
//! monitors (`garbagecollector/graph_builder.rs`) are both sinks: one loop,
//! two ways of keeping what it delivers.
//!
//! Simplified: no paginated initial list, no watch-list streaming, no
//! bookmarks requested (they are followed when they come).

use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::client::{Client, ClientError, ListParams, ResourceRef, WatchEvent, json_resource_version};
use super::trace;
use std::sync::Arc;

/// First wait before retrying a failed list or watch (client-go: 800 ms).
const RETRY_BASE: Duration = Duration::from_millis(800);
/// Longest wait between retries (client-go: 30 s).
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Where a reflector puts what it lists and watches (client-go's `Store`
/// as the reflector uses it).
pub trait Sink: Send + 'static {
    /// A list replaced everything known (client-go `Replace`).
    fn replace(&mut self, items: Vec<Value>);
    /// An ADDED or MODIFIED object.
    fn upsert(&mut self, object: Value);
    /// A DELETED object, in its last state.
    fn delete(&mut self, object: Value);
    /// The resync period elapsed (client-go `Resync`).
    fn resync(&mut self) {}
}

/// Why a watch ended.
enum WatchEnd {
    /// The server closed it, or it failed: watch again from `last_rv`.
    Rewatch,
    /// 410 Expired: list again.
    Relist,
    /// Shutting down.
    Shutdown,
}

/// The list-and-watch loop of one resource.
pub struct Reflector<S> {
    client: Arc<dyn Client>,
    resource: ResourceRef,
    params: ListParams,
    clock: Clock,
    /// How often the sink is asked to resync, if at all.
    resync: Option<Duration>,
    sink: S,
    /// The resourceVersion to resume a watch from.
    last_rv: String,
}

impl<S: Sink> Reflector<S> {
    /// A reflector of `resource` (all namespaces, filtered by `params`) into `sink`.
    pub fn new(
        client: Arc<dyn Client>,
        resource: ResourceRef,
        params: ListParams,
        clock: Clock,
        resync: Option<Duration>,
        sink: S,
    ) -> Self {
        Reflector {
            client,
            resource,
            params,
            clock,
            resync,
            sink,
            last_rv: String::new(),
        }
    }

    /// Lists and watches until `shutdown`, relisting after 410 Expired and
    /// retrying failures with a growing pause.
    pub async fn run(mut self, shutdown: CancellationToken) {
        let mut failures = 0u32;
        loop {
            if failures > 0 && !self.wait(retry_delay(failures), &shutdown).await {
                return;
            }
            match self.list().await {
                Ok(()) => failures = 0,
                Err(e) => {
                    failures += 1;
                    tracing::warn!(kind = %self.resource.kind, "list failed: {e}");
                    continue;
                }
            }
            if let WatchEnd::Shutdown = self.watch_until_expired(&shutdown).await {
                return;
            }
            // Relist after 410, with a growing pause if it keeps happening.
            failures += 1;
        }
    }

    /// Waits `d` on the clock; false when shut down meanwhile.
    async fn wait(&self, d: Duration, shutdown: &CancellationToken) -> bool {
        tokio::select! {
            _ = shutdown.cancelled() => false,
            _ = self.clock.sleep(d) => true,
        }
    }

    async fn list(&mut self) -> Result<(), ClientError> {
        let (items, rv) = self.client.list(&self.resource, None, &self.params).await?;
        trace::informer_listed(&self.resource.kind, items.len(), &rv);
        self.sink.replace(items);
        self.last_rv = rv;
        Ok(())
    }

    /// Watches, rewatching from the last resourceVersion when a watch ends,
    /// until 410 Expired or shutdown.
    async fn watch_until_expired(&mut self, shutdown: &CancellationToken) -> WatchEnd {
        let mut failures = 0u32;
        loop {
            let watch = self
                .client
                .watch(&self.resource, None, &self.params, &self.last_rv);
            let stream = match watch.await {
                Ok(s) => s,
                Err(e) if e.is_expired() => return WatchEnd::Relist,
                Err(e) => {
                    failures += 1;
                    tracing::warn!(kind = %self.resource.kind, "watch failed: {e}");
                    if !self.wait(retry_delay(failures), shutdown).await {
                        return WatchEnd::Shutdown;
                    }
                    continue;
                }
            };
            failures = 0;
            match self.follow(stream, shutdown).await {
                WatchEnd::Rewatch => continue,
                other => return other,
            }
        }
    }

    /// Applies the events of one watch, and resyncs on schedule.
    async fn follow(
        &mut self,
        mut stream: BoxStream<'static, WatchEvent>,
        shutdown: &CancellationToken,
    ) -> WatchEnd {
        let mut resync = self.resync_timer();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return WatchEnd::Shutdown,
                _ = &mut resync => {
                    self.sink.resync();
                    resync = self.resync_timer();
                }
                event = stream.next() => match event {
                    None => return WatchEnd::Rewatch,
                    Some(event) => {
                        if let Some(end) = self.apply(event) {
                            return end;
                        }
                    }
                },
            }
        }
    }

    /// Fires after the resync period (never, without one).
    fn resync_timer(&self) -> futures::future::BoxFuture<'static, ()> {
        let clock = self.clock.clone();
        let period = self.resync;
        Box::pin(async move {
            match period {
                Some(p) => clock.sleep(p).await,
                None => std::future::pending().await,
            }
        })
    }

    /// One watch event; `Some` when it ends the watch.
    fn apply(&mut self, event: WatchEvent) -> Option<WatchEnd> {
        match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                self.last_rv = json_resource_version(&o).to_string();
                self.sink.upsert(o);
            }
            WatchEvent::Deleted(o) => {
                self.last_rv = json_resource_version(&o).to_string();
                self.sink.delete(o);
            }
            WatchEvent::Bookmark(rv) => self.last_rv = rv,
            WatchEvent::Error(e) if e.is_expired() => {
                tracing::info!(kind = %self.resource.kind, "watch expired ({e}); relisting");
                return Some(WatchEnd::Relist);
            }
            WatchEvent::Error(e) => {
                tracing::warn!(kind = %self.resource.kind, "watch error: {e}");
                return Some(WatchEnd::Rewatch);
            }
        }
        None
    }
}

/// 800 ms doubling per failure, at most 30 s (client-go's backoff manager).
fn retry_delay(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1)).min(64);
    RETRY_BASE.saturating_mul(factor).min(RETRY_MAX)
}

#[cfg(test)]
mod tests {
    use super::retry_delay;
    use std::time::Duration;

    #[test]
    fn retries_back_off_from_800_ms_to_30_s() {
        assert_eq!(retry_delay(1), Duration::from_millis(800));
        assert_eq!(retry_delay(2), Duration::from_millis(1600));
        assert_eq!(
            retry_delay(6),
            Duration::from_secs(25) + Duration::from_millis(600)
        );
        assert_eq!(retry_delay(7), Duration::from_secs(30));
        assert_eq!(retry_delay(40), Duration::from_secs(30));
    }
}
