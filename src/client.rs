//! Client integration: `code-intel init` (config, .gitignore, .mcp.json,
//! Claude Code commands and hook, Cursor) and the Claude Code `PreToolUse`
//! hook that refuses writes the active session may not make.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::STATE_DIR;
use crate::learn::SessionStore;
use crate::repo::Repo;
use crate::session;

/// A session idle for longer than this is not treated as active by the hook
/// (12 hours: a working day, so yesterday's abandoned session does not block).
pub const ACTIVE_SESSION_MAX_AGE_SECS: u64 = 12 * 3600;

/// Directories `init` records as `source_dirs` when they exist (Laravel,
/// JS/TS and Python layouts).
pub const SOURCE_DIR_CANDIDATES: [&str; 8] = [
    "app",
    "src",
    "lib",
    "resources",
    "database",
    "routes",
    "config",
    "packages",
];

/// Claude Code tools that write files.
pub const WRITE_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// What init did (or, with `--dry-run`, would do) to one file.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct Change {
    /// Repo-relative path.
    pub file: String,
    /// `created`, `updated` or `unchanged`.
    pub action: String,
}

const CODE_MD: &str = include_str!("../assets/claude/code.md");
const OUTCOME_MD: &str = include_str!("../assets/claude/outcome.md");

/// How a client starts the server: the command and the environment it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// `code-intel` when that name on `PATH` is this executable (the entry
    /// then works on every machine where it is installed), else the
    /// absolute path of the executable.
    pub command: String,
    /// `command` is the bare name found on `PATH`.
    pub on_path: bool,
    /// `ORT_DYLIB_PATH` when ONNX Runtime is not next to the executable, and
    /// `CODE_INTEL_MODEL_DIR`, when set for this process.
    pub env: serde_json::Map<String, Value>,
}

/// The [`Launch`] of `exe`.
pub fn launch(exe: &Path) -> Launch {
    const NAME: &str = "code-intel";
    let canon = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| d.join(NAME).canonicalize().is_ok_and(|c| c == canon))
    });
    let mut env = serde_json::Map::new();
    let beside = canon
        .parent()
        .is_some_and(|d| !crate::embed::dylibs_in(d).is_empty());
    for key in ["ORT_DYLIB_PATH", "CODE_INTEL_MODEL_DIR"] {
        if let Some(v) = std::env::var_os(key).filter(|v| !v.is_empty())
            && !(key == "ORT_DYLIB_PATH" && beside)
        {
            env.insert(key.into(), json!(v.to_string_lossy()));
        }
    }
    Launch {
        command: if on_path {
            NAME.to_string()
        } else {
            canon.display().to_string()
        },
        on_path,
        env,
    }
}

impl Launch {
    /// The `mcpServers` entry.
    pub fn server_entry(&self) -> Value {
        let mut v = json!({ "command": self.command, "args": ["serve", "--repo", "."] });
        if !self.env.is_empty() {
            v["env"] = Value::Object(self.env.clone());
        }
        v
    }
}

/// Adds the `PreToolUse` write-gate hook running `command` to Claude
/// Code's settings, unless a `hook pre-tool-use` hook is there already.
fn add_hook(v: &mut serde_json::Value, command: &str) {
    let Some(o) = v.as_object_mut() else { return };
    let hooks = o.entry("hooks").or_insert_with(|| json!({}));
    let Some(h) = hooks.as_object_mut() else {
        return;
    };
    let list = h.entry("PreToolUse").or_insert_with(|| json!([]));
    let Some(arr) = list.as_array_mut() else {
        return;
    };
    let present = arr.iter().any(|e| {
        e["hooks"].as_array().is_some_and(|hs| {
            hs.iter().any(|x| {
                x["command"]
                    .as_str()
                    .is_some_and(|c| c.ends_with("hook pre-tool-use"))
            })
        })
    });
    if !present {
        arr.push(json!({
            "matcher": WRITE_TOOLS.join("|"),
            "hooks": [{ "type": "command", "command": command, "timeout": 10 }]
        }));
    }
}

/// Sets a repository up for code-intel. Idempotent: a second run reports
/// every file `unchanged`. Existing JSON files are merged, never replaced;
/// a file that is not valid JSON is left alone and reported as an error.
///
/// # Errors
/// Unreadable or invalid existing JSON, or a write failure (message names
/// the file).
pub fn init(
    repo: &Repo,
    launch: &Launch,
    hooks: bool,
    cursor: bool,
    dry_run: bool,
) -> Result<Vec<Change>, String> {
    let root = repo.root();
    let exe_s = launch.command.clone();
    let server = launch.server_entry();
    let mut plan: Vec<(PathBuf, String)> = Vec::new();

    let config = root.join(STATE_DIR).join("config.json");
    if !config.exists() {
        let detected: Vec<String> = SOURCE_DIR_CANDIDATES
            .iter()
            .filter(|d| root.join(d).is_dir())
            .map(|d| d.to_string())
            .collect();
        // Only what init decides: every other key keeps its default, so a
        // later release's better defaults (fitted weights) reach the repo.
        let text = serde_json::to_string_pretty(&json!({ "source_dirs": detected }))
            .map_err(|e| e.to_string())?;
        plan.push((config, text + "\n"));
    }
    let gitignore = root.join(".gitignore");
    let current = std::fs::read_to_string(&gitignore).unwrap_or_default();
    if !current.lines().any(|l| {
        matches!(
            l.trim(),
            ".code-intel" | ".code-intel/" | "/.code-intel/" | "/.code-intel"
        )
    }) {
        let sep = if current.is_empty() || current.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        plan.push((gitignore, format!("{current}{sep}.code-intel/\n")));
    }
    plan.push(merge_json(&root.join(".mcp.json"), |v| {
        add_server(v, &server)
    })?);
    plan.push((root.join(".claude/commands/code.md"), CODE_MD.to_string()));
    plan.push((
        root.join(".claude/commands/outcome.md"),
        OUTCOME_MD.to_string(),
    ));
    if hooks {
        let command = format!("{exe_s} hook pre-tool-use");
        plan.push(merge_json(&root.join(".claude/settings.json"), |v| {
            add_hook(v, &command);
        })?);
    }
    if cursor {
        plan.push(merge_json(&root.join(".cursor/mcp.json"), |v| {
            add_server(v, &server)
        })?);
    }

    let mut changes = Vec::new();
    for (path, text) in plan {
        let old = std::fs::read_to_string(&path).ok();
        let action = match &old {
            Some(o) if *o == text => "unchanged",
            Some(_) => "updated",
            None => "created",
        };
        if action != "unchanged" && !dry_run {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            std::fs::write(&path, &text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        changes.push(Change {
            file: repo.rel(&path),
            action: action.into(),
        });
    }
    Ok(changes)
}

/// The JSON file with `edit` applied, pretty-printed (a missing file starts
/// as `{}`).
fn merge_json(path: &Path, edit: impl FnOnce(&mut Value)) -> Result<(PathBuf, String), String> {
    let mut v = match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str::<Value>(&t).map_err(|e| {
            format!(
                "{} is not valid JSON ({e}); fix or remove it and run init again",
                path.display()
            )
        })?,
        Err(_) => json!({}),
    };
    if !v.is_object() {
        return Err(format!(
            "{} is not a JSON object; fix it and run init again",
            path.display()
        ));
    }
    edit(&mut v);
    let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
    Ok((path.to_path_buf(), text))
}

/// Sets `mcpServers.code-intel` in an MCP client config, keeping the other
/// servers.
fn add_server(v: &mut Value, server: &Value) {
    if let Some(o) = v.as_object_mut() {
        let servers = o.entry("mcpServers").or_insert_with(|| json!({}));
        if let Some(m) = servers.as_object_mut() {
            m.insert("code-intel".into(), server.clone());
        }
    }
}

/// The `.mcp.json`-style snippet for a client config.
pub fn mcp_snippet(launch: &Launch) -> String {
    serde_json::to_string_pretty(&json!({
        "mcpServers": { "code-intel": launch.server_entry() }
    }))
    .unwrap_or_default()
}

/// The hook's decision on one Claude Code `PreToolUse` payload: `None` to
/// allow (print nothing), or the JSON to print to deny. Never touches the
/// model or the index.
pub fn pre_tool_use(input: &Value) -> Option<Value> {
    let tool = input["tool_name"].as_str()?;
    if !WRITE_TOOLS.contains(&tool) {
        return None;
    }
    let ti = &input["tool_input"];
    let file = ti["file_path"]
        .as_str()
        .or_else(|| ti["notebook_path"].as_str())?;
    let cwd = input["cwd"].as_str().map(PathBuf::from).unwrap_or_default();
    let abs = if Path::new(file).is_absolute() {
        PathBuf::from(file)
    } else {
        cwd.join(file)
    };
    let root = find_root(&abs).or_else(|| find_root(&cwd))?;
    let repo = match Repo::open(&root) {
        Ok(r) => r,
        Err(e) => return Some(deny(&format!("code-intel refuses {tool} on {file}: {e}"))),
    };
    let store = SessionStore::new(&repo.state_dir());
    let s = match store.active(ACTIVE_SESSION_MAX_AGE_SECS) {
        Ok(s) => s?,
        // A session file that cannot be read: the gate cannot decide, so the
        // write is refused rather than let through.
        Err(e) => return Some(deny(&format!("code-intel refuses {tool} on {file}: {e}"))),
    };
    // Resolve the target like check_write_target: the file, or (for a new
    // file, perhaps in new directories) its nearest existing ancestor, must
    // be inside the repository. What cannot be resolved is refused.
    let exists = abs.is_file();
    let Some(canon) = resolve_target(&abs) else {
        return Some(deny(&format!(
            "code-intel refuses {tool} on {file}: the path cannot be resolved. Recovery: use a path inside the repository."
        )));
    };
    if !canon.starts_with(repo.root()) {
        return None;
    }
    let rel = repo.rel(&canon);
    // Write creates files: treat it as allow_new_files, as /code tells the agent to.
    let allow_new = tool == "Write";
    let target = crate::framework::conventions::write_target(&repo, &rel, exists, allow_new);
    let refusal = session::check_write(&s, &target).err()?;
    let reason = format!(
        "code-intel session {} ({:?}) refuses {tool} on {rel}: {} Recovery: {}.",
        s.id,
        s.phase,
        refusal.reason,
        refusal.recovery_options.join(", ")
    );
    Some(deny(&reason))
}

/// `abs` with symlinks resolved: the file itself when it exists, else its
/// nearest existing ancestor canonicalised with the missing components
/// appended (`app/Observers/OrderObserver.php` before `app/Observers/`
/// exists). `None` when no ancestor resolves or a missing component is
/// `..` or `.`.
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

/// The hook's deny decision (Claude Code's PreToolUse output).
fn deny(reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    })
}

/// The nearest ancestor directory (inclusive) holding `.code-intel/`.
fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join(STATE_DIR).is_dir())
        .map(Path::to_path_buf)
}
