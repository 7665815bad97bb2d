//! The crate's integration tests, linked as one test binary (one link per change, not one
//! per file): each module is one file of tests/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod desktop_e2e;
mod inner;
mod keyring;
mod local_backend;
mod sandbox_backend;
mod sandbox_provisioner;
