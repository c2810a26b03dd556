//! `code-intel hook pre-tool-use`: the Claude Code write-gate hook.
//!
//! Claude Code's hook protocol: JSON on stdout with a `deny` decision, or
//! exit code 2 with the reason on stderr (a blocking error). Any other
//! non-zero exit is treated as non-blocking, so every failure here that
//! could hide a refusal exits 2.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::Result;

/// Exit code Claude Code treats as "block this tool call".
const BLOCK: u8 = 2;

pub fn hook_cmd() -> Result<ExitCode> {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        return Ok(block(&format!("cannot read the hook input: {e}")));
    }
    // A payload we cannot read could be a write: refuse rather than let it
    // through (Claude Code always sends valid JSON).
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(block("the hook input is not valid UTF-8"));
    };
    let v = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => v,
        Err(e) => return Ok(block(&format!("the hook input is not valid JSON: {e}"))),
    };
    if let Some(out) = crate::client::hook::pre_tool_use(&v).to_json() {
        writeln!(std::io::stdout().lock(), "{out}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn block(reason: &str) -> ExitCode {
    eprintln!(
        "code-intel write gate: {reason}. Recovery: retry the tool call; if it persists, run `code-intel doctor`."
    );
    ExitCode::from(BLOCK)
}
