//! Tests of the CSR signer: the plan and the signing as tables, the
//! controller against a real API.

mod controller;
mod fixtures;
mod plan;
mod sign;
