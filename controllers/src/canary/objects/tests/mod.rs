//! Tests of the object builders (pure) and of [`super::apply`] against a real API.

mod apply;
mod builders;
mod fixtures;
