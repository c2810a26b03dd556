//! `code-intel serve`: the stdio MCP server (what `.mcp.json` runs).

use std::path::Path;

use crate::server::CodeIntel;
use anyhow::{Context, Result};
use rmcp::ServiceExt;

use super::open;

/// Serves the repository until the client closes stdin.
pub async fn serve_cmd(repo: &Path) -> Result<()> {
    let (repo, config) = open(repo)?;
    tracing::info!("serving {}", repo.root().display());
    let server = CodeIntel::new(repo, config);
    server.start_background();
    // The guard answers malformed requests rmcp would drop unanswered.
    let guarded = crate::server::transport::guarded(tokio::io::stdin(), tokio::io::stdout());
    let service = server
        .serve((guarded.input, guarded.output))
        .await
        .context("MCP handshake failed")?;
    let stopped = service.waiting().await;
    // Every reply and guard answer is written before the process ends.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), guarded.writer).await;
    stopped.context("MCP server stopped with an error")?;
    Ok(())
}
