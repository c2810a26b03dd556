//! `code-intel serve`: the stdio MCP server (what `.mcp.json` runs).

use std::path::Path;

use anyhow::{Context, Result};
use code_intel::server::CodeIntel;
use rmcp::ServiceExt;

use super::open;

/// Serves the repository until the client closes stdin.
pub async fn serve_cmd(repo: &Path) -> Result<()> {
    let (repo, config) = open(repo)?;
    tracing::info!("serving {}", repo.root().display());
    let server = CodeIntel::new(repo, config);
    server.start_background();
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .context("MCP handshake failed")?;
    service
        .waiting()
        .await
        .context("MCP server stopped with an error")?;
    Ok(())
}
