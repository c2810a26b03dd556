//! Client integration: `code-intel init` (config, .gitignore, .mcp.json,
//! Claude Code commands and hook, Cursor); the Claude Code `PreToolUse`
//! hook that refuses writes no open session may make is [`hook`], the
//! files a Bash command writes [`shell`].

pub mod hook;
mod shell;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::STATE_DIR;
use crate::repo::Repo;

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

/// One file a tool call writes: absolute (joined to the payload's `cwd`,
/// not yet resolved), and whether the call may create it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub path: PathBuf,
    /// `Write`, a redirection, `cp` …: creating the file is the point, as
    /// `allow_new_files` is for `check_write_target`.
    pub creates: bool,
}

/// What init did (or, with `--dry-run`, would do) to one file.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct Change {
    /// Repo-relative path.
    pub file: String,
    /// `created`, `updated` or `unchanged`.
    pub action: String,
}

const CODE_MD: &str = include_str!("../../assets/claude/code.md");
const OUTCOME_MD: &str = include_str!("../../assets/claude/outcome.md");
/// The `/code` workflow's write step: with the write hook installed, edits
/// go straight to the hook; without it, `check_write_target` before each.
const WRITE_STEP: &str = include_str!("../../assets/claude/write-step.md");
const WRITE_STEP_HOOK: &str = include_str!("../../assets/claude/write-step-hook.md");

/// The `/code` command's text, for a repository with or without the write
/// hook.
pub fn code_md(hook: bool) -> String {
    CODE_MD.replace(
        "{{write_step}}\n",
        if hook { WRITE_STEP_HOOK } else { WRITE_STEP },
    )
}

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

/// Whether a `PreToolUse` entry of Claude Code's settings runs
/// `code-intel hook pre-tool-use`.
fn runs_our_hook(entry: &Value) -> bool {
    entry["hooks"].as_array().is_some_and(|hs| {
        hs.iter().any(|x| {
            x["command"]
                .as_str()
                .is_some_and(|c| c.ends_with("hook pre-tool-use"))
        })
    })
}

/// The matcher of the installed write-gate hook in Claude Code's settings
/// (`.claude/settings.json` as JSON), if one is installed.
pub fn installed_matcher(settings: &Value) -> Option<String> {
    settings["hooks"]["PreToolUse"]
        .as_array()?
        .iter()
        .find(|e| runs_our_hook(e))
        .map(|e| e["matcher"].as_str().unwrap_or("").to_string())
}

/// The matcher of the write-gate hook installed in the project settings of
/// the repository at `root` (`.claude/settings.json`), if one is.
pub fn repo_hook_matcher(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join(".claude/settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| installed_matcher(&v))
}

/// Whether the repository at `root` has the write-gate hook installed.
pub fn hook_installed(root: &Path) -> bool {
    repo_hook_matcher(root).is_some()
}

/// Adds the `PreToolUse` write-gate hook running `command` to Claude
/// Code's settings; an installed one gets today's matcher (an older
/// release's left Bash out).
fn add_hook(v: &mut Value, command: &str) {
    let matcher = hook::matcher();
    let mut present = false;
    let entries = v
        .get_mut("hooks")
        .and_then(|h| h.get_mut("PreToolUse"))
        .and_then(Value::as_array_mut);
    for e in entries.into_iter().flatten().filter(|e| runs_our_hook(e)) {
        present = true;
        e["matcher"] = json!(matcher);
    }
    if present {
        return;
    }
    let Some(o) = v.as_object_mut() else { return };
    let hooks = o.entry("hooks").or_insert_with(|| json!({}));
    let Some(h) = hooks.as_object_mut() else {
        return;
    };
    let list = h.entry("PreToolUse").or_insert_with(|| json!([]));
    if let Some(arr) = list.as_array_mut() {
        arr.push(json!({
            "matcher": matcher,
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
    if !config.exists() || hooks {
        // Only what init decides: every other key keeps its default, so a
        // later release's better defaults (fitted weights) reach the repo.
        plan.push(merge_json(&config, |v| {
            if v.get("source_dirs").is_none() {
                let detected: Vec<String> = SOURCE_DIR_CANDIDATES
                    .iter()
                    .filter(|d| root.join(d).is_dir())
                    .map(|d| d.to_string())
                    .collect();
                v["source_dirs"] = json!(detected);
            }
            // With the hook installed, a write needs an open session (the
            // hook gates; without a session it would have nothing to ask).
            if hooks && v.get("require_session").is_none() {
                v["require_session"] = json!(true);
            }
        })?);
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
    plan.push((
        root.join(".claude/commands/code.md"),
        code_md(hooks || hook_installed(root)),
    ));
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
