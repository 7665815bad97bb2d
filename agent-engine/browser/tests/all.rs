//! Every test of tandem-browser, in one binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod definitions;
mod fixture;
mod follow;
mod live;
