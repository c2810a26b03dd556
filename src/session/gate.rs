//! The tool gate by phase and the write gate (docs/sessions.md § Gate).

use std::collections::BTreeSet;

use super::model::{HypothesisState, Phase, Refusal, ToolClass};

/// The tool gate (docs/sessions.md § Gate): EXPLORATION allows code tools and map search,
/// not forest; SEMANTIC allows forest, not the exploration tools;
/// VERIFICATION allows code tools and map, not forest; READY allows all.
///
/// # Errors
/// A [`Refusal`] naming what is allowed now.
pub fn gate(phase: Phase, class: ToolClass) -> Result<(), Refusal> {
    let refuse = |reason: &str, options: &[&str]| {
        Err(Refusal {
            reason: reason.to_string(),
            recovery_options: options.iter().map(|s| s.to_string()).collect(),
        })
    };
    match (phase, class) {
        (Phase::Ready, _)
        | (Phase::Exploration | Phase::Verification, ToolClass::Code | ToolClass::Map)
        | (Phase::Semantic, ToolClass::Forest | ToolClass::Map) => Ok(()),
        (Phase::Exploration, ToolClass::Forest) => refuse(
            "semantic search over code (forest) is not allowed in EXPLORATION: find the code with exact tools first",
            &[
                "find_definitions",
                "find_references",
                "search_text",
                "semantic_search with collection=map",
                "submit_understanding (enters SEMANTIC when exact tools found nothing)",
            ],
        ),
        (Phase::Verification, ToolClass::Forest) => refuse(
            "forest search is not allowed in VERIFICATION: confirm or reject each hypothesis with code tools",
            &[
                "find_definitions",
                "get_function_at_line",
                "submit_verification",
            ],
        ),
        (Phase::Semantic, ToolClass::Code) => refuse(
            "exploration tools are not allowed in SEMANTIC: search forest for hypotheses, then submit them",
            &["semantic_search with collection=forest", "submit_semantic"],
        ),
    }
}

/// Whether a tool is offered in `phase` when the tool list is phase-scoped:
/// code tools only where the gate lets them through, submit_semantic only in
/// SEMANTIC, submit_verification only in VERIFICATION; everything else always.
pub fn tool_offered(phase: Phase, tool: &str) -> bool {
    match tool {
        "search_text"
        | "find_definitions"
        | "find_references"
        | "get_symbols"
        | "analyze_structure"
        | "get_function_at_line" => gate(phase, ToolClass::Code).is_ok(),
        "submit_semantic" => phase == Phase::Semantic,
        "submit_verification" => phase == Phase::Verification,
        _ => true,
    }
}

/// Whether `file` may be written (docs/sessions.md § Gate): only in READY,
/// never while a HYPOTHESIS remains, never a file a rejected hypothesis
/// named, only explored files — or, with `allow_new`, a new file whose
/// parent directory was explored.
///
/// # Errors
/// A [`Refusal`] with `recovery_options`.
pub fn check_write(
    phase: Phase,
    file: &str,
    file_exists: bool,
    allow_new: bool,
    explored: &BTreeSet<String>,
    hypotheses: &[(String, HypothesisState)],
) -> Result<(), Refusal> {
    let refuse = |reason: String, options: &[&str]| {
        Err(Refusal {
            reason,
            recovery_options: options.iter().map(|s| s.to_string()).collect(),
        })
    };
    if phase != Phase::Ready {
        return refuse(
            format!("writes are allowed only in READY; the session is in {phase:?}"),
            &["submit_understanding", "get_session_status"],
        );
    }
    if hypotheses
        .iter()
        .any(|(_, s)| *s == HypothesisState::Hypothesis)
    {
        return refuse(
            "an unverified HYPOTHESIS remains: confirm or reject it with submit_verification"
                .into(),
            &["submit_verification"],
        );
    }
    if hypotheses
        .iter()
        .any(|(f, s)| *s == HypothesisState::Rejected && f == file)
    {
        return refuse(
            format!("`{file}` came from a rejected hypothesis"),
            &["revert_to_exploration", "add_explored_files"],
        );
    }
    if explored.contains(file) {
        return Ok(());
    }
    if !file_exists {
        let parent = file.rsplit_once('/').map_or("", |(d, _)| d);
        let parent_explored = explored
            .iter()
            .any(|f| f.rsplit_once('/').map_or("", |(d, _)| d) == parent);
        if allow_new && parent_explored {
            return Ok(());
        }
        return refuse(
            if allow_new {
                format!("new file `{file}`: no file in its directory `{parent}` was explored")
            } else {
                format!(
                    "`{file}` does not exist; pass allow_new_files=true to create it in an explored directory"
                )
            },
            &["add_explored_files", "revert_to_exploration"],
        );
    }
    refuse(
        format!("`{file}` was not explored in this session"),
        &["add_explored_files", "revert_to_exploration"],
    )
}
