//! The real MCP servers the tests run: `@modelcontextprotocol/server-everything` and
//! `server-filesystem`, installed by `scripts/setup.sh` into an npm cache outside the checkout
//! (never downloaded at test time).

use std::path::{Path, PathBuf};

/// The npm cache `scripts/setup.sh` fills: `$TANDEM_MCP_SERVERS`, else
/// `~/.cache/tandem/mcp-servers`. `None` (with a message) when it is missing, unless
/// `TANDEM_REQUIRE_MCP=1` (as `scripts/test.sh` sets), which makes a missing cache a failure.
pub fn servers_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TANDEM_MCP_SERVERS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/tandem/mcp-servers"))
        })?;
    if Path::new(&entry(&dir, "server-everything")).is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("TANDEM_REQUIRE_MCP").as_deref() != Ok("1"),
        "TANDEM_REQUIRE_MCP=1 but the MCP servers are not installed in {} (run scripts/setup.sh)",
        dir.display()
    );
    eprintln!(
        "skipped: MCP servers not installed in {} (run scripts/setup.sh)",
        dir.display()
    );
    None
}

/// The entry script of `@modelcontextprotocol/<package>` in the cache `dir`.
pub fn entry(dir: &Path, package: &str) -> String {
    dir.join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .to_string_lossy()
        .into_owned()
}
