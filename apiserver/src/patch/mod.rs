//! Patching: strategic merge patch, server-side apply, and the field metadata they share.
pub mod apply;
pub mod meta;
pub mod strategic;
