//! The Claude Code `PreToolUse` write-gate hook: which files a tool call
//! writes (Edit, Write, MultiEdit, NotebookEdit, and Bash command lines,
//! [`super::shell`]), and whether an open session of the repository
//! allows each of them (`session::check_write`, the rule
//! `check_write_target` applies). Reads files only (no model, no index),
//! so it answers in milliseconds.
//!
//! Fails closed: a payload it cannot read, a session or config file it
//! cannot parse, a path it cannot resolve is refused with the reason, never
//! let through (docs/sessions.md § The write hook).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Write, shell};
use crate::config::{Config, STATE_DIR};
use crate::learn::SessionStore;
use crate::repo::Repo;
use crate::session::{self, Session};

/// A session idle for longer than this is not treated as open by the hook
/// (12 hours: a working day, so yesterday's abandoned session does not block).
pub const ACTIVE_SESSION_MAX_AGE_SECS: u64 = 12 * 3600;

/// Claude Code tools whose input names the one file they write.
pub const FILE_WRITE_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// Claude Code's shell tool: its command line is read for the files it writes.
pub const SHELL_TOOL: &str = "Bash";

/// The `matcher` `init --hooks` installs: every tool that can write a file.
pub fn matcher() -> String {
    let mut tools = FILE_WRITE_TOOLS.to_vec();
    tools.push(SHELL_TOOL);
    tools.join("|")
}

/// The hook's answer to one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Print nothing: the call goes on to Claude Code's own permissions.
    Allow,
    /// Allowed by one of several open sessions, named for the agent
    /// (`additionalContext`, no permission decision).
    AllowedBy(String),
    /// Refused, with the reason and what to do instead.
    Deny(String),
}

impl Decision {
    /// Claude Code's `PreToolUse` output, `None` for [`Decision::Allow`].
    pub fn to_json(&self) -> Option<Value> {
        match self {
            Decision::Allow => None,
            Decision::AllowedBy(context) => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "additionalContext": context,
                }
            })),
            Decision::Deny(reason) => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            })),
        }
    }
}

/// The fields of a `PreToolUse` payload the hook reads; a payload without
/// `tool_name` is malformed.
#[derive(Deserialize)]
struct Payload {
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    cwd: Option<String>,
}

#[derive(Deserialize)]
struct FileInput {
    file_path: String,
}

#[derive(Deserialize)]
struct NotebookInput {
    notebook_path: String,
}

#[derive(Deserialize)]
struct ShellInput {
    command: String,
}

/// The hook's decision on one `PreToolUse` payload (JSON).
pub fn pre_tool_use(input: &Value) -> Decision {
    let p: Payload = match serde_json::from_value(input.clone()) {
        Ok(p) => p,
        Err(e) => return malformed(&format!("the payload has no readable `tool_name` ({e})")),
    };
    let cwd = p.cwd.map(PathBuf::from).unwrap_or_default();
    let tool = p.tool_name.as_str();
    let writes = match tool {
        "NotebookEdit" => match serde_json::from_value::<NotebookInput>(p.tool_input) {
            Ok(i) => vec![Write {
                path: cwd.join(i.notebook_path),
                creates: true,
            }],
            Err(e) => return malformed(&format!("{tool} without a string `notebook_path` ({e})")),
        },
        t if FILE_WRITE_TOOLS.contains(&t) => {
            match serde_json::from_value::<FileInput>(p.tool_input) {
                // `Write` creates files: treated as allow_new_files, as
                // /code tells the agent to.
                Ok(i) => vec![Write {
                    path: cwd.join(i.file_path),
                    creates: tool == "Write",
                }],
                Err(e) => return malformed(&format!("{tool} without a string `file_path` ({e})")),
            }
        }
        SHELL_TOOL => match serde_json::from_value::<ShellInput>(p.tool_input) {
            Ok(i) => shell::writes(&i.command, &cwd),
            Err(e) => return malformed(&format!("{tool} without a string `command` ({e})")),
        },
        _ => return Decision::Allow,
    };
    let mut allowed_by = Vec::new();
    let mut repos = HashMap::new();
    for w in &writes {
        match judge(tool, w, &cwd, &mut repos) {
            Decision::Deny(reason) => return Decision::Deny(reason),
            Decision::AllowedBy(s) if !allowed_by.contains(&s) => allowed_by.push(s),
            _ => {}
        }
    }
    if allowed_by.is_empty() {
        Decision::Allow
    } else {
        Decision::AllowedBy(allowed_by.join("; "))
    }
}

fn malformed(what: &str) -> Decision {
    Decision::Deny(format!(
        "code-intel refuses a malformed PreToolUse payload: {what}. Recovery: retry the tool call; if it persists, run `code-intel doctor`."
    ))
}

/// What the hook reads of one repository, once per call whatever the number
/// of files the call writes there: its config, and its open sessions when a
/// write inside it needs them.
struct RepoState {
    config: Config,
    repo: Repo,
    sessions: Option<Result<Vec<Session>, String>>,
}

impl RepoState {
    /// The repository at `root`, or why it cannot be read.
    fn load(root: &Path) -> Result<RepoState, String> {
        let config = Config::load(root).map_err(|e| {
            format!("{e}. Recovery: fix .code-intel/config.json (`code-intel doctor` names the problem).")
        })?;
        let repo = Repo::open(root)
            .map_err(|e| e.to_string())?
            .with_sensitive_patterns(&config.sensitive_patterns);
        Ok(RepoState {
            config,
            repo,
            sessions: None,
        })
    }
}

/// The open sessions of `repo`, newest first. A session file that cannot be
/// read is an error: the gate cannot decide, so the write is refused rather
/// than let through.
fn open_sessions(repo: &Repo) -> Result<Vec<Session>, String> {
    SessionStore::new(&repo.state_dir())
        .open_sessions(ACTIVE_SESSION_MAX_AGE_SECS)
        .map_err(|e| e.to_string())
}

/// The decision on one written file; `repos` keeps what was read of each
/// repository (by root) for the call's other files.
fn judge(
    tool: &str,
    w: &Write,
    cwd: &Path,
    repos: &mut HashMap<PathBuf, Result<RepoState, String>>,
) -> Decision {
    let shown = w.path.display();
    let Some(root) = find_root(&w.path).or_else(|| find_root(cwd)) else {
        return Decision::Allow;
    };
    let refuse =
        |why: String| Decision::Deny(format!("code-intel refuses {tool} on {shown}: {why}"));
    let state = match repos
        .entry(root)
        .or_insert_with_key(|root| RepoState::load(root))
    {
        Ok(state) => state,
        Err(why) => return refuse(why.clone()),
    };
    // Resolve the target like check_write_target: the file, or (for a new
    // file, perhaps in new directories) its nearest existing ancestor, must
    // be inside the repository. What cannot be resolved is refused.
    let Some(canon) = resolve_target(&w.path) else {
        return refuse(
            "the path cannot be resolved. Recovery: use a path inside the repository.".into(),
        );
    };
    if !canon.starts_with(state.repo.root()) {
        return Decision::Allow;
    }
    let rel = state.repo.rel(&canon);
    if rel == STATE_DIR || rel.starts_with(&format!("{STATE_DIR}/")) {
        return refuse(format!(
            "`{rel}` is code-intel's own state (sessions, index, logs); no tool call writes it. Recovery: use the MCP tools (record_outcome, revert_to_exploration, sync_index)."
        ));
    }
    let RepoState {
        config,
        repo,
        sessions,
    } = state;
    let sessions = match sessions.get_or_insert_with(|| open_sessions(repo)) {
        Ok(s) => s,
        Err(why) => return refuse(why.clone()),
    };
    if sessions.is_empty() {
        return if config.require_session {
            Decision::Deny(format!(
                "code-intel refuses {tool} on {rel}: no code-intel session is open, and this repository requires one for every write (`require_session` in .code-intel/config.json). Recovery: start_session (the /code workflow), gather evidence until READY, then write."
            ))
        } else {
            Decision::Allow
        };
    }
    let target =
        crate::framework::conventions::write_target(repo, &rel, canon.is_file(), w.creates);
    verdict(tool, &rel, sessions, &target)
}

/// Allowed when one open session allows the write (named when several are
/// open); otherwise refused with each session's reason, newest first.
fn verdict(tool: &str, rel: &str, sessions: &[Session], target: &session::WriteTarget) -> Decision {
    let mut refusals = Vec::new();
    for s in sessions {
        match session::check_write(s, target) {
            Ok(()) if sessions.len() == 1 => return Decision::Allow,
            Ok(()) => {
                return Decision::AllowedBy(format!(
                    "code-intel: {tool} on {rel} is allowed by session {} ({:?}), one of {} open sessions",
                    s.id,
                    s.phase,
                    sessions.len()
                ));
            }
            Err(r) => refusals.push(format!(
                "session {} ({:?}) refuses {tool} on {rel}: {} Recovery: {}.",
                s.id,
                s.phase,
                r.reason,
                r.recovery_options.join(", ")
            )),
        }
    }
    if refusals.len() == 1 {
        return Decision::Deny(format!("code-intel {}", refusals.remove(0)));
    }
    Decision::Deny(format!(
        "code-intel: none of the {} open sessions allows this write. {}",
        refusals.len(),
        refusals.join(" ")
    ))
}

/// `abs` with symlinks resolved: the file itself when it exists, else its
/// nearest existing ancestor canonicalised with the missing components
/// appended (`app/Observers/OrderObserver.php` before `app/Observers/`
/// exists). `None` when no ancestor resolves or a missing component is
/// `..` or `.`. Not `Repo::resolve_for_write`: that refuses every path
/// outside the root, and a file outside every repository is not the hook's
/// to refuse (`/tmp/out.txt`); inside, the same rules apply.
fn resolve_target(abs: &Path) -> Option<PathBuf> {
    if let Ok(c) = abs.canonicalize() {
        return Some(c);
    }
    let mut missing = Vec::new();
    for dir in abs.ancestors() {
        if let Ok(base) = dir.canonicalize() {
            let mut out = base;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return Some(out);
        }
        match dir.components().next_back()? {
            std::path::Component::Normal(name) => missing.push(name.to_os_string()),
            _ => return None,
        }
    }
    None
}

/// The nearest ancestor directory (inclusive) holding `.code-intel/`.
fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join(STATE_DIR).is_dir())
        .map(Path::to_path_buf)
}
