//! The quarantine behaves as upstream's delaying node queue.

use super::fixtures::t;
use crate::podgc::quarantine::{QUARANTINE_TIME, Quarantine, quarantine_end};

#[test]
fn a_node_is_ready_for_its_check_after_the_quarantine_and_only_once() {
    let mut q = Quarantine::new();
    q.add_after("gone", quarantine_end(t(0)));
    assert_eq!(QUARANTINE_TIME.as_secs(), 40);
    assert!(q.take_ready(t(39)).is_empty());
    assert_eq!(q.take_ready(t(40)), ["gone"]);
    assert!(q.is_empty() && q.take_ready(t(100)).is_empty());
}

#[test]
fn adding_again_does_not_postpone_the_check() {
    let mut q = Quarantine::new();
    q.add_after("b", quarantine_end(t(0)));
    q.add_after("a", quarantine_end(t(10)));
    // The next passes add them again, later: the first end times stand.
    q.add_after("b", quarantine_end(t(20)));
    q.add_after("a", quarantine_end(t(20)));
    assert_eq!(q.len(), 2);
    assert_eq!(q.take_ready(t(40)), ["b"]);
    assert_eq!(q.take_ready(t(50)), ["a"]);
}
