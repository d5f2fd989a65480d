//! `miniplane explain`: how an object got its current state, told from the causal journal.
//!
//! The journal ([`store::journal`]) records every step of the machinery with the step that caused
//! it: a user's write, the watch event it produced, the key that event put in a work queue, the
//! sync that took the key, the decisions the sync's plan made, and the writes the sync did, which
//! produce events in turn. Explaining an object is following those links backwards:
//!
//! ```text
//! seeds   every write to the object and every decision about it
//! chain   from each seed, `cause` after `cause` back to a root (a user's request, or a timer)
//! story   the chain's syncs, each with all its decisions (the why) and its writes on the chain
//!         (the what), newest first, back to the user's own request
//! ```
//!
//! [`target`] reads `KIND/NAME` or `KIND NAME` as kubectl does (`deploy`, `rs`, `po`, any case);
//! [`story`] builds the story from the entries, pure; [`render`] prints it, folding repeated
//! identical syncs (a kubelet reporting the same progress) into one line with a count. The
//! command line (`src/explain_cli.rs`) only fetches `/debug/journal` and prints.
//!
//! No upstream counterpart: `kubectl describe` shows the last events of one object, never why a
//! controller did what it did.

pub mod render;
pub mod story;
pub mod target;

pub use render::{RenderOptions, render};
pub use story::{Story, build};
pub use target::{Target, parse_target};

use store::journal::Entry;

/// The explanation of `target` from `entries` (all the journal holds, oldest first), as printed.
pub fn explain(entries: &[Entry], target: &Target, options: &RenderOptions) -> String {
    render(&build(entries, target, options.status_writes), target, options)
}
