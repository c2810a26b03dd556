//! `code-intel init`: sets a repository up for Claude Code and Cursor.

use std::io::Write;
use std::path::Path;

use crate::repo::Repo;
use anyhow::{Context, Result};

pub fn init_cmd(path: &Path, hooks: bool, cursor: bool, dry_run: bool) -> Result<()> {
    let repo =
        Repo::open(path).with_context(|| format!("cannot open repository {}", path.display()))?;
    let exe = std::env::current_exe().context("cannot locate the code-intel executable")?;
    let launch = crate::client::launch(&exe);
    let changes =
        crate::client::init(&repo, &launch, hooks, cursor, dry_run).map_err(anyhow::Error::msg)?;
    let mut out = std::io::stdout().lock();
    if launch.on_path {
        writeln!(out, "command: code-intel (found on PATH)")?;
    } else {
        writeln!(
            out,
            "command: {} (`code-intel` on PATH is not this binary, so the absolute path is written; it works on this machine only — install code-intel on PATH and run init again for an entry teams can commit)",
            launch.command
        )?;
    }
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
            crate::client::mcp_snippet(&launch)
        )?;
    }
    Ok(())
}
