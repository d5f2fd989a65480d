//! (being written)

use axum::Router;

use super::AppState;

/// The routes served here.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
}
