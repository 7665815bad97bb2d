//! Named LLM profiles kept under `$TANDEM_HOME/profiles/{name}.json`: the store the agent
//! server's `/api/profiles` routes and its OpenAI gateway serve, and by which a conversation
//! names its LLM without carrying a key. Secret fields (`api_key` and the AWS keys) are
//! encrypted at rest with ChaCha20-Poly1305 ([`KeySource`]: a key file made on first use, or
//! one derived from `OH_SECRET_KEY`).

mod cipher;
mod store;

pub use cipher::KeySource;
pub use store::{ProfileStore, SECRET_FIELDS, StoreError, canonical, valid_name};
