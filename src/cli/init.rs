//! `code-intel init`: sets a repository up for Claude Code and Cursor.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use code_intel::repo::Repo;

pub fn init_cmd(path: &Path, hooks: bool, cursor: bool, dry_run: bool) -> Result<()> {
    let repo =
        Repo::open(path).with_context(|| format!("cannot open repository {}", path.display()))?;
    let exe = std::env::current_exe().context("cannot locate the code-intel executable")?;
    let changes = code_intel::client::init(&repo, &exe, hooks, cursor, dry_run)
        .map_err(anyhow::Error::msg)?;
    let mut out = std::io::stdout().lock();
    for c in &changes {
        writeln!(
            out,
            "{:<10} {}",
            if dry_run && c.action != "unchanged" {
                format!("would be {}", c.action)
            } else {
                c.action.clone()
            },
            c.file
        )?;
    }
    if !cursor {
        writeln!(
            out,
            "\nCursor: put this in .cursor/mcp.json (or run init --cursor):\n{}",
            code_intel::client::mcp_snippet(&exe)
        )?;
    }
    Ok(())
}
