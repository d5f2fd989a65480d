//! Tests of the object builders and of apply.
