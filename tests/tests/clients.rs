//! TEMPORARY stand-in for the client-matrix test binary (the lead replaces
//! this file): runs the kube-rs entry against a fresh miniplane.

#[path = "clients/kube_rs.rs"]
mod kube_rs;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_everyday() {
    let cluster = e2e::Cluster::start_with(e2e::Config {
        clock: store::Clock::scaled(10.0),
        ..e2e::Config::ephemeral()
    })
    .await;
    let results = kube_rs::everyday(cluster.server().kubeconfig()).await;
    for (op, outcome) in &results {
        match outcome {
            Ok(()) => println!("RESULT {op} PASS"),
            Err(why) => println!("RESULT {op} FAIL {why}"),
        }
    }
    let failed: Vec<&str> = results
        .iter()
        .filter(|(_, o)| o.is_err())
        .map(|(op, _)| *op)
        .collect();
    assert!(failed.is_empty(), "failed operations: {failed:?}");
}
