//! What every benchmark shares: its `main` and its printing.

use std::future::Future;

/// Any error a benchmark step may end with.
pub type Result<T, E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

/// Runs `bench` on a multi-threaded runtime under `cargo bench`, which passes
/// `--bench`; under `cargo test --benches` (no `--bench`) it only says so, so
/// that the test run checks the benchmark builds and starts.
pub fn main<F: Future<Output = Result<()>>>(name: &str, bench: impl FnOnce() -> F) -> Result<()> {
    if !std::env::args().any(|a| a == "--bench") {
        println!("{name}: skipped (run it with `cargo bench --bench {name}`)");
        return Ok(());
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(bench())
}

/// A section heading of the printed report.
pub fn section(title: &str) {
    println!("\n== {title}");
}
