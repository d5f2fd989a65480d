//! The operator as a program, against the cluster of the current kubeconfig
//! (`KUBECONFIG`, or `~/.kube/config`), e.g. one from `miniplane up`:
//!
//! ```text
//! kubectl apply -f examples/webapp-operator/crd.yaml
//! cargo run -p webapp-operator            # runs until Ctrl-C
//! cargo run -p webapp-operator -- crd     # prints the CRD (what crd.yaml holds)
//! ```

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use webapp_operator::Now;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if std::env::args().nth(1).as_deref() == Some("crd") {
        print!("{}", webapp_operator::crd_yaml());
        return Ok(());
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,webapp_operator=debug".into()),
        )
        .init();
    let client = kube::Client::try_default().await?;
    let shutdown = async {
        // If Ctrl-C cannot be listened for, run until killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tracing::info!("webapp-operator running; Ctrl-C stops it");
    webapp_operator::run(client, wall_clock(), shutdown).await;
    Ok(())
}

/// A real operator runs on the real clock (the workspace's clippy rule
/// against wall-clock calls is for the simulated cluster's code).
#[allow(
    clippy::disallowed_methods,
    reason = "the operator's one wall-clock read, outside tests"
)]
fn wall_clock() -> Now {
    Arc::new(Timestamp::now)
}
