//! Re-exports at the old path of the selector helpers, for the table
//! printers until they import from [`crate::labels`] and [`crate::fields`].
//! Label selectors live in [`crate::labels`], field selectors and selectable
//! fields in [`crate::fields`].
//!
//! Upstream: none (the helpers' own modules name their upstream files).

pub use crate::labels::{format_label_selector, format_labels, label_selector_string};
// The committed table.rs still imports it from here; goes when table/ lands.
#[allow(unused_imports)]
pub(crate) use crate::fields::pod_ip;
