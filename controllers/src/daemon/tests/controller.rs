//! controller tests (todo)
