//! Patching: JSON Patch, strategic merge patch, server-side apply, and the field metadata they share.
pub mod apply;
pub mod json;
pub mod meta;
pub mod strategic;
