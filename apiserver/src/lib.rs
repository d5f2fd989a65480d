//! apiserver
