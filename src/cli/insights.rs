//! `code-intel insights`: failure correlations from recorded outcomes.

use std::io::Write;
use std::path::Path;

use super::open;
use anyhow::Result;

pub fn insights_cmd(repo: &Path, json: bool) -> Result<()> {
    let (repo, _) = open(repo)?;
    let store = crate::learn::SessionStore::new(&repo.state_dir());
    let insights = crate::learn::insights(&store.read_log(crate::learn::OUTCOMES_LOG));
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&insights)?)?;
    } else {
        write!(out, "{}", insights.summary())?;
    }
    Ok(())
}
