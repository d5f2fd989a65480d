//! Table tests of the pure parts: the owner graph and the decisions.

mod graph;
mod plan;
