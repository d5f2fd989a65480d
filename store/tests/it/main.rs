//! The store's integration tests, in one binary (one link, one `cargo test`
//! target), sled-style: a model-based property test first, then targeted
//! tests for what a model cannot see (restarts, crashes, time, size).
//!
//! - `model`: random operations against a `BTreeMap` model, with restarts.
//! - `recovery`: restart and `kill -9` recovery.
//! - `window`: watch history expiry by count and age, slow watchers, close.
//!
//! `tests/churn.rs` and `tests/group_commit.rs` are separate binaries (see
//! their docs for why).
//! - `concurrency`: racing writers and watchers.

mod concurrency;
mod model;
mod recovery;
mod support;
mod window;
