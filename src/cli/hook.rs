//! `code-intel hook pre-tool-use`: the Claude Code write-gate hook.

use std::io::Write;

use anyhow::Result;

pub fn hook_cmd() -> Result<()> {
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)?;
    // A payload we cannot read is allowed: the hook must never wedge the client.
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&input) else {
        return Ok(());
    };
    if let Some(deny) = code_intel::client::pre_tool_use(&v) {
        writeln!(std::io::stdout().lock(), "{deny}")?;
    }
    Ok(())
}
