//! Slow start: create in doubling batches, so a failing create is not repeated a hundred times.
//!
//! Upstream: `pkg/controller/replicaset/replica_set.go` (`slowStartBatch`) and
//! `pkg/controller/controller_utils.go` (`SlowStartInitialBatchSize`).
//!
//! Simplified: only the batch sizes are computed here; the caller issues the batches.

/// The first slow-start batch creates this many pods (upstream `SlowStartInitialBatchSize`).
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

/// The batch sizes of upstream `slowStartBatch`: 1, 2, 4, … each capped by what is left, summing to
/// `count`.
///
/// The caller issues one batch at a time and stops after a batch with any failure; the sizes of the
/// batches it never issued are the "skipped" creations it must remove from its expectations.
pub fn slow_start_batches(count: usize, initial_batch_size: usize) -> Vec<usize> {
    let mut batches = Vec::new();
    let mut remaining = count;
    let mut size = remaining.min(initial_batch_size.max(1));
    while size > 0 {
        batches.push(size);
        remaining -= size;
        size = remaining.min(size.saturating_mul(2));
    }
    batches
}
