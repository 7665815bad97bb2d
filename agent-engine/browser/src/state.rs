//! Frames of the live view (the state types are `tandem_protocol`'s wire types).

use std::sync::Arc;

/// One screencast frame of the active tab.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Base64 of the JPEG.
    pub data: Arc<str>,
    /// Width of the viewport in CSS pixels (coordinates of input refer to these).
    pub width: f64,
    /// Height of the viewport in CSS pixels.
    pub height: f64,
    /// A counter, to tell frames apart.
    pub seq: u64,
}
