//! `tandem-browser`: the agent's browser. Chromium driven over CDP (chromiumoxide), the
//! `browser_*` tools upstream gives the model, the live screencast and a person's takeover.
