//! An agent server with a tool of its own: `word_count`, which counts the words of a file in the
//! conversation's workspace.
//!
//! ```sh
//! cargo run -p tandem-server --example custom_tool
//! ```
//!
//! Any client (the UI, `tandem run --server`, the OpenHands Python client) then gives an agent
//! the tool by naming it in the agent spec, as plain JSON:
//! `"tools": [{"name": "terminal"}, {"name": "word_count"}]`.

use std::sync::Arc;

use serde_json::{Value, json};
use tandem_sdk::{FnTool, Tool};
use tandem_server::{Server, ServerConfig};

/// The tool: its name, what the model reads about it, its arguments' JSON Schema, and what it
/// does. An `Err` is shown to the model as a failed call.
fn word_count() -> FnTool {
    let parameters = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace."}
        },
        "required": ["path"]
    });
    FnTool::new(
        "word_count",
        "Count the words of a text file in the workspace.",
        parameters,
        |args, ctx| async move {
            let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
            // Keep to the workspace: resolve links and `..`, then check where the file is.
            let root = ctx.working_dir.canonicalize().map_err(|e| e.to_string())?;
            let file = root
                .join(path)
                .canonicalize()
                .map_err(|e| format!("{path}: {e}"))?;
            if !file.starts_with(&root) {
                return Err(format!("{path} is outside the workspace"));
            }
            let text = tokio::fs::read_to_string(&file)
                .await
                .map_err(|e| format!("{path}: {e}"))?;
            Ok(format!("{path}: {} words", text.split_whitespace().count()))
        },
    )
    .read_only()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let home = std::env::temp_dir().join("tandem-custom-tool-example");
    let mut config = ServerConfig::from_env(&home);
    // Registered by name: a spec naming `word_count` gets a fresh tool per conversation.
    config
        .tools
        .register_tool(&["word_count"], |_params, _env| {
            Ok(Arc::new(word_count()) as Arc<dyn Tool>)
        });
    let server = Server::start(config).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    println!("serving on http://{}", listener.local_addr()?);
    axum::serve(listener, server.router()).await
}
