//! Table tests for the ReplicaSet planning core; fixtures are built with the chained builders in
//! [`fixtures`].

mod fixtures;
mod plan;
mod pod_util;
mod status;
