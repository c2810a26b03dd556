//! `code-intel doctor`: checks the installation and the index, each problem
//! with its fix; exit code 2 when something is broken.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::config::Config;
use crate::embed::{self, E5_DIM, Embedder};
use crate::index::{self, SyncState};
use crate::model;
use crate::repo::Repo;
use crate::store::Store;
use anyhow::{Context, Result};

/// The outcome of one check: `ok` false means broken (exit code 2); a
/// message always says what was found and, when something is off, the fix.
struct Check {
    name: &'static str,
    ok: bool,
    message: String,
}

fn check(name: &'static str, ok: bool, message: impl Into<String>) -> Check {
    Check {
        name,
        ok,
        message: message.into(),
    }
}

/// Runs every check and prints them (text or JSON).
pub async fn doctor_cmd(repo: &Path, json: bool) -> Result<ExitCode> {
    let repo =
        Repo::open(repo).with_context(|| format!("cannot open repository {}", repo.display()))?;
    let (config, mut checks) = config_checks(&repo);
    match &config.embedding_endpoint {
        Some(endpoint) => checks.push(endpoint_check(endpoint).await),
        None => {
            checks.push(runtime_check(&config));
            checks.push(model_check(&config));
        }
    }
    if let Some(uri) = &config.vector_store {
        checks.push(vector_store_check(&repo, &config, uri).await);
    }
    checks.extend(index_checks(&repo, &config).await);
    checks.extend(state_file_checks(&repo));
    checks.extend(client_checks(&repo));
    let broken = checks.iter().filter(|c| !c.ok).count();
    let mut out = std::io::stdout().lock();
    if json {
        let v: Vec<_> = checks
            .iter()
            .map(|c| serde_json::json!({"check": c.name, "ok": c.ok, "message": c.message}))
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"ok": broken == 0, "checks": v}))?
        )?;
    } else {
        for c in &checks {
            let mark = if c.ok { "ok  " } else { "FAIL" };
            writeln!(out, "{mark} {:<16} {}", c.name, c.message)?;
        }
    }
    Ok(if broken > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// State files that could not be read: an unparsable `sync_state.json`
/// (the next sync re-reads every file), `learned_pairs.json` records that
/// do not parse (skipped), and files moved aside as `*.corrupt-<time>` by
/// the session and learned-pair stores.
fn state_file_checks(repo: &Repo) -> Vec<Check> {
    let dir = repo.state_dir();
    let mut checks = Vec::new();
    let state = dir.join("sync_state.json");
    if let Ok(text) = std::fs::read_to_string(&state)
        && let Err(e) = serde_json::from_str::<serde_json::Value>(&text)
    {
        checks.push(check(
            "sync_state",
            false,
            format!(
                "{} is unreadable ({e}): the next sync re-reads every file (vectors are reused); fix: run `code-intel index`",
                state.display()
            ),
        ));
    }
    let pairs = dir.join("learned_pairs.json");
    if let Ok(text) = std::fs::read_to_string(&pairs)
        && let Ok(records) = serde_json::from_str::<Vec<serde_json::Value>>(&text)
    {
        let bad = records
            .iter()
            .filter(|r| serde_json::from_value::<crate::learn::LearnedPair>((*r).clone()).is_err())
            .count();
        if bad > 0 {
            checks.push(check(
                "learned_pairs",
                false,
                format!(
                    "{bad} of {} records in {} do not parse and are skipped (the others are kept); fix: remove them from the file",
                    records.len(),
                    pairs.display()
                ),
            ));
        }
    }
    let mut moved: Vec<String> = [dir.clone(), dir.join("sessions")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".corrupt-"))
        })
        .map(|p| p.display().to_string())
        .collect();
    moved.sort();
    if !moved.is_empty() {
        checks.push(check(
            "corrupt_files",
            false,
            format!(
                "moved aside as unreadable: {}; fix: inspect them (a session can be restarted with start_session), then delete them",
                moved.join(", ")
            ),
        ));
    }
    checks
}

/// The binary, the config (defaults when it is broken) and unknown keys.
fn config_checks(repo: &Repo) -> (Config, Vec<Check>) {
    let mut checks = vec![check(
        "binary",
        true,
        format!("code-intel {}", env!("CARGO_PKG_VERSION")),
    )];
    let config = match Config::load(repo.root()) {
        Ok(c) => {
            checks.push(check(
                "config",
                true,
                "valid (.code-intel/config.json or defaults)",
            ));
            c
        }
        Err(e) => {
            checks.push(check("config", false, e.to_string()));
            Config::default()
        }
    };
    let unknown = std::fs::read_to_string(repo.state_dir().join("config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .map(|v| crate::config::unknown_keys(&v))
        .unwrap_or_default();
    if !unknown.is_empty() {
        checks.push(check(
            "config_keys",
            true,
            format!(
                "unknown keys ignored: {} (typo? see .code-intel.example)",
                unknown.join(", ")
            ),
        ));
    }
    (config, checks)
}

fn runtime_check(config: &Config) -> Check {
    match embed::find_runtime(config) {
        Ok(r) => check(
            "onnx_runtime",
            true,
            format!(
                "{} (version {})",
                r.path.display(),
                r.version.as_deref().unwrap_or("unknown")
            ),
        ),
        // Not broken while the first index or serve can download it.
        Err(e) if crate::runtime::supported() && embed::may_download_runtime(config) => check(
            "onnx_runtime",
            true,
            format!(
                "not found ({e}); the first index or serve downloads ONNX Runtime {} from PyPI into {} (`code-intel model pull` does it now)",
                crate::runtime::ORT_VERSION,
                crate::runtime::runtime_dir().display()
            ),
        ),
        Err(e) => check("onnx_runtime", false, e.to_string()),
    }
}

/// One query through the endpoint, without retries: reachable, key
/// accepted, the configured model and width answered.
async fn endpoint_check(endpoint: &crate::config::EndpointConfig) -> Check {
    let probe = crate::config::EndpointConfig {
        retries: 0,
        timeout_seconds: endpoint.timeout_seconds.min(15),
        ..endpoint.clone()
    };
    let result = tokio::task::spawn_blocking(move || {
        let e = embed::endpoint::EndpointEmbedder::new(&probe)?;
        let url = e.url().to_string();
        let started = std::time::Instant::now();
        e.embed_query("doctor")
            .map(|v| (url, v.len(), started.elapsed()))
    })
    .await;
    match result {
        Ok(Ok((url, dim, took))) => check(
            "embedding_endpoint",
            true,
            format!(
                "{url} answers with {} ({dim}-d) in {} ms; the local model is not used",
                endpoint.model,
                took.as_millis()
            ),
        ),
        Ok(Err(e)) => check("embedding_endpoint", false, e.to_string()),
        Err(e) => check("embedding_endpoint", false, e.to_string()),
    }
}

/// Opens the shared store as a sync would and counts its vectors of the
/// index's model.
async fn vector_store_check(repo: &Repo, config: &Config, uri: &str) -> Check {
    let state = SyncState::load(repo);
    let model = match &config.embedding_endpoint {
        Some(e) => e.model.clone(),
        None if !state.model_id.is_empty() => state.model_id.clone(),
        None => config.embedding_model.clone(),
    };
    let opened = crate::store::shared::SharedVectors::open(
        uri,
        &config.vector_store_options,
        &model,
        E5_DIM,
    )
    .await;
    match opened {
        Ok(s) => match s.rows().await {
            Ok(rows) => check(
                "vector_store",
                true,
                format!("{uri}: {} vectors of {model} ({rows} rows in all)", s.len()),
            ),
            Err(e) => check("vector_store", false, e.to_string()),
        },
        Err(e) => {
            let hint = if uri.starts_with("s3://")
                && std::env::var_os("AWS_ACCESS_KEY_ID").is_none()
                && std::env::var_os("AWS_PROFILE").is_none()
            {
                "; no AWS_ACCESS_KEY_ID or AWS_PROFILE in the environment: export credentials (and AWS_ENDPOINT_URL for an S3-compatible server)"
            } else {
                ""
            };
            check(
                "vector_store",
                false,
                format!("{e}{hint}; syncs embed locally until it is fixed"),
            )
        }
    }
}

fn model_check(config: &Config) -> Check {
    let mb = |dir: &Path| walk_size(dir) / 1_000_000;
    match &config.model_dir {
        Some(dir) if embed::model_present(config) => {
            check("model", true, format!("{} ({} MB)", dir.display(), mb(dir)))
        }
        Some(dir) => check(
            "model",
            false,
            format!(
                "model_dir {} lacks model.onnx or tokenizer files; point model_dir at a complete model directory",
                dir.display()
            ),
        ),
        None => {
            let missing = model::missing_files(config).len();
            let message = if missing == 0 {
                format!(
                    "{} in {} ({} MB)",
                    config.embedding_model,
                    model::hub_cache_dir(config).display(),
                    model::cached_bytes(config) / 1_000_000
                )
            } else {
                format!(
                    "not downloaded yet ({missing} of {} files missing): `code-intel model pull` fetches {} (~470 MB) into {} from {} (the first index or serve does it too); offline, set model_dir",
                    model::MODEL_REPO_FILES.len(),
                    config.embedding_model,
                    model::hub_cache_dir(config).display(),
                    model::endpoint()
                )
            };
            check("model", true, message)
        }
    }
}

/// Rows against the sync state, and files changed since the last sync.
async fn index_checks(repo: &Repo, config: &Config) -> Vec<Check> {
    let lance = repo.state_dir().join("lance");
    if !lance.exists() {
        return vec![check(
            "index",
            true,
            "not built yet: run `code-intel index`",
        )];
    }
    let state = SyncState::load(repo);
    let mut checks = Vec::new();
    match Store::open(&lance, E5_DIM).await {
        Ok(s) => {
            let rows = s.forest_rows().await.unwrap_or(0);
            let ok = rows == state.chunk_count();
            checks.push(check(
                "index",
                ok,
                format!(
                    "forest {rows} rows, map {} rows, sync_state {} files / {} chunks{}",
                    s.map_rows().await.unwrap_or(0),
                    state.files.len(),
                    state.chunk_count(),
                    if ok {
                        ""
                    } else {
                        " — rows and state disagree: run `code-intel index`"
                    }
                ),
            ));
        }
        Err(e) => checks.push(check("index", false, e.to_string())),
    }
    let stale = index::stale_files(repo, config, &state);
    checks.push(check(
        "index_freshness",
        true,
        if stale == 0 {
            "no file changed since the last sync".to_string()
        } else {
            format!(
                "{stale} file(s) changed since the last sync: run `code-intel index` (serve syncs on start)"
            )
        },
    ));
    checks
}

/// The `.mcp.json` entry and the Claude Code hook.
fn client_checks(repo: &Repo) -> Vec<Check> {
    let mcp = std::fs::read_to_string(repo.root().join(".mcp.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let registered = mcp
        .as_ref()
        .is_some_and(|v| !v["mcpServers"]["code-intel"].is_null());
    let settings = crate::client::repo_hook_matcher(repo.root());
    let wanted = crate::client::hook::matcher();
    let hook_message = match settings {
        Some(m) if m == wanted => "Claude Code PreToolUse hook installed".to_string(),
        Some(m) => format!(
            "Claude Code PreToolUse hook installed, but its matcher `{m}` is not `{wanted}` (Bash writes pass ungated): run `code-intel init --hooks` again"
        ),
        None => "write-gate hook not installed: run `code-intel init --hooks`".to_string(),
    };
    vec![
        check(
            "mcp_json",
            true,
            if registered {
                ".mcp.json registers code-intel"
            } else {
                "no code-intel entry in .mcp.json: run `code-intel init`"
            },
        ),
        check("hook", true, hook_message),
    ]
}

/// Bytes under a directory.
fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            match std::fs::metadata(&p) {
                Ok(m) if m.is_dir() => walk_size(&p),
                Ok(m) => m.len(),
                Err(_) => 0,
            }
        })
        .sum()
}
