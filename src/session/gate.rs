//! The tool gate by phase and the write gate (docs/sessions.md § Gate).

use super::model::{HypothesisState, Intent, Phase, Refusal, Session, Tool, ToolClass};
use crate::classify::FileClass;

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
pub fn tool_offered(phase: Phase, tool: Tool) -> bool {
    match tool {
        Tool::SearchText
        | Tool::FindDefinitions
        | Tool::FindReferences
        | Tool::GetSymbols
        | Tool::AnalyzeStructure
        | Tool::GetFunctionAtLine
        | Tool::ReadFile
        | Tool::RelatedFiles => gate(phase, ToolClass::Code).is_ok(),
        Tool::SubmitSemantic => phase == Phase::Semantic,
        Tool::SubmitVerification => phase == Phase::Verification,
        _ => true,
    }
}

/// What the write gate knows about a target file; built by the caller
/// (server and hook alike: `framework::conventions::write_target`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    /// Repo-relative path.
    pub file: String,
    pub exists: bool,
    /// The caller asked to create the file (`allow_new_files`, or the hook's `Write`).
    pub allow_new: bool,
    /// The file's class by its path.
    pub class: FileClass,
    /// For a new file: the convention its path follows (`Laravel app/Observers`,
    /// `PSR-4 App\ → app/`), if any.
    pub convention: Option<String>,
    /// For a new file: its nearest existing ancestor directory ("" = the root).
    pub existing_dir: String,
}

fn dir_of(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether a file may be written (docs/sessions.md § Gate), in this order:
/// never in QUESTION or INVESTIGATE sessions; only in READY; never while a
/// HYPOTHESIS remains or to a file a rejected hypothesis named; never a lock,
/// vendored or generated file the request does not name; an existing file
/// only when its content was returned in this session and the change covers
/// it (the understanding edits it — `files_to_edit`, or the analysed files
/// when it names none — or `add_explored_files` added it in READY without
/// raising the risk); a new file (with `allow_new`) that the change lists,
/// in a directory of a file the understanding lists, or on a
/// framework/PSR-4 convention path under the nearest existing directory of
/// one.
///
/// # Errors
/// A [`Refusal`] with `recovery_options`.
pub fn check_write(s: &Session, t: &WriteTarget) -> Result<(), Refusal> {
    session_writes(s, &t.file)?;
    tool_owned(s, t)?;
    if s.explored.contains(&t.file) {
        return read_file_write(s, &t.file);
    }
    if t.exists {
        let file = &t.file;
        return refuse(
            format!("`{file}` was not read in this session (its content was never returned)"),
            &[
                &format!("read_file {file} with session_id"),
                "add_explored_files with a reason (returns the content)",
            ],
        );
    }
    new_file(s, t)
}

/// A refusal with what to do instead.
fn refuse(reason: String, options: &[&str]) -> Result<(), Refusal> {
    Err(Refusal {
        reason,
        recovery_options: options.iter().map(|o| (*o).to_string()).collect(),
    })
}

/// Whether this session may write at all now, and `file` is not from a
/// rejected hypothesis: an IMPLEMENT/MODIFY session in READY with every
/// hypothesis settled.
fn session_writes(s: &Session, file: &str) -> Result<(), Refusal> {
    if matches!(s.intent, Intent::Question | Intent::Investigate) {
        return refuse(
            format!(
                "a {:?} session never writes; start a session with intent MODIFY or IMPLEMENT for changes",
                s.intent
            ),
            &["start_session with intent MODIFY or IMPLEMENT"],
        );
    }
    if s.phase != Phase::Ready {
        return refuse(
            format!(
                "writes are allowed only in READY; the session is in {:?}",
                s.phase
            ),
            &["submit_understanding", "get_session_status"],
        );
    }
    if s.hypotheses
        .iter()
        .any(|h| h.state == HypothesisState::Hypothesis)
    {
        return refuse(
            "an unverified HYPOTHESIS remains: confirm or reject it with submit_verification"
                .into(),
            &["submit_verification"],
        );
    }
    if s.hypotheses
        .iter()
        .any(|h| h.state == HypothesisState::Rejected && h.file == file)
    {
        return refuse(
            format!("`{file}` came from a rejected hypothesis"),
            &["revert_to_exploration", "add_explored_files"],
        );
    }
    Ok(())
}

/// Lock, vendored and generated files are written by their tool, unless
/// the request names them.
fn tool_owned(s: &Session, t: &WriteTarget) -> Result<(), Refusal> {
    if !matches!(
        t.class,
        FileClass::Lock | FileClass::Vendored | FileClass::Generated
    ) {
        return Ok(());
    }
    let file = t.file.as_str();
    let name = file.rsplit('/').next().unwrap_or(file);
    if super::normalize(&s.query).contains(name) {
        return Ok(());
    }
    refuse(
        format!(
            "`{file}` is a {} file: it is written by its tool (composer, npm, a build), not edited, unless the request names it",
            t.class.name()
        ),
        &[
            "run the tool that owns it (composer update, npm install, the build)",
            "edit the source it is made from",
        ],
    )
}

/// A file read in the session: writable when the change covers it (the
/// understanding edits it, or `add_explored_files` added it in READY, which
/// re-assesses the risk).
fn read_file_write(s: &Session, file: &str) -> Result<(), Refusal> {
    if s.covers(file) {
        return Ok(());
    }
    refuse(
        format!(
            "`{file}` is not in the submitted understanding: add it to the change with add_explored_files and a reason (the risk of touching it is assessed then)"
        ),
        &[
            &format!("add_explored_files [{file}] with a reason"),
            "revert_to_exploration, then submit_understanding with the file in files_to_edit",
        ],
    )
}

/// A new file: allowed with `allow_new` beside a file read in the session,
/// or on a convention path under a directory a read file is in.
fn new_file(s: &Session, t: &WriteTarget) -> Result<(), Refusal> {
    let file = t.file.as_str();
    let parent = dir_of(file);
    if !t.allow_new {
        return refuse(
            format!("`{file}` does not exist; pass allow_new_files=true to create it"),
            &["check_write_target with allow_new_files=true"],
        );
    }
    if s.covers(file) || s.covered().any(|f| dir_of(f) == parent) {
        return Ok(());
    }
    let under = |dir: &str| {
        s.covered()
            .any(|f| dir.is_empty() || f.starts_with(&format!("{dir}/")))
    };
    match &t.convention {
        Some(_) if under(&t.existing_dir) => Ok(()),
        Some(c) => refuse(
            format!(
                "new file `{file}` follows {c}, but no file under `{}` was read in this session: read a sibling or the code that will use or register it",
                if t.existing_dir.is_empty() {
                    "."
                } else {
                    &t.existing_dir
                }
            ),
            &[
                "read_file a file it will sit beside or be registered in (e.g. a model, a service provider)",
                "add_explored_files with a reason",
            ],
        ),
        None => refuse(
            format!(
                "new file `{file}`: no file in `{parent}` was read and the path follows no convention of this repository (composer.json PSR-4, framework directories)"
            ),
            &[
                &format!("read_file a file in `{parent}`"),
                "choose a conventional location",
                "add_explored_files with a reason",
            ],
        ),
    }
}
