//! The HPA controller's tests: upstream's replica calculator cases ([`replica_calculator`]),
//! normalization and behavior tables ([`normalize`]), metric queries and proposals
//! ([`horizontal`]), and the controller against a real API on paused time ([`controller`]).

mod controller;
mod decisions;
mod fixtures;
mod horizontal;
mod normalize;
mod replica_calculator;
