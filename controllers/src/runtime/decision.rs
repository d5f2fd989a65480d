//! A plan decision as the causal journal records it: the upstream function
//! it mirrors and a sentence with the numbers it was made from.
//!
//! There is no client-go counterpart: upstream controllers say the same at
//! `-v=4` in their logs, without the arithmetic. Each controller's
//! `decisions.rs` builds [`Decision`]s with pure functions; its sync records
//! them with [`record`] while it runs, so that each is caused by that sync.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use store::Clock;
use store::journal::ObjectRef;

/// One decision of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The upstream function it mirrors (`reconcileNewReplicaSet`).
    pub function: &'static str,
    /// What was decided, with the numbers.
    pub message: String,
}

/// A decision of `function` saying `message`.
pub fn decision(function: &'static str, message: String) -> Decision {
    Decision { function, message }
}

/// A typed object as the causal journal names it: kind, namespace, name.
pub fn journal_ref<K>(obj: &K) -> ObjectRef
where
    K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    let meta = obj.metadata();
    ObjectRef::new(
        K::KIND,
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or(""),
    )
}

/// Records the decisions `decide` returns about `obj` by `controller` in
/// `clock`'s journal, caused by the sync running now; with the journal off,
/// `decide` is not called (its sentences cost nothing).
pub fn record<K, I>(clock: &Clock, controller: &str, obj: &K, decide: impl FnOnce() -> I)
where
    K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>,
    I: IntoIterator<Item = Decision>,
{
    if !clock.journal().enabled() {
        return;
    }
    for d in decide() {
        clock.decide(controller, d.function, Some(journal_ref(obj)), || d.message);
    }
}
