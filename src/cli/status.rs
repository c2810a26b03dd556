//! `code-intel status`: files, chunks, tables, what was left out and why,
//! last sync, model and ONNX Runtime state.

use std::io::Write;
use std::path::Path;

use crate::embed::{self, E5_DIM};
use crate::index::{self, Progress, SyncState};
use crate::store::Store;
use anyhow::Result;

use super::open;

pub async fn status_cmd(repo: &Path, json: bool) -> Result<()> {
    let (repo, config) = open(repo)?;
    let state = SyncState::load(&repo);
    let readiness = index::readiness(&repo, &Progress::default(), &config);
    let runtime = embed::find_runtime(&config);
    let lance = repo.state_dir().join("lance");
    let rows = if lance.exists() {
        match Store::open(&lance, E5_DIM).await {
            Ok(s) => Some(Ok((
                s.forest_rows().await?,
                s.map_rows().await?,
                s.file_rows().await?,
            ))),
            Err(e) => Some(Err(e.to_string())),
        }
    } else {
        None
    };
    let left_out = left_out(&state);
    let service = ServiceStatus::of(&config);
    let dictionary = crate::rank::dictionary::dictionary();
    let dictionary_path = crate::config::dictionary_path();
    let v = serde_json::json!({
        "repo": repo.root(),
        "files_indexed": state.files.len(),
        "files_skipped": state.skipped.len(),
        "left_out": left_out
            .iter()
            .map(|(k, (n, ex))| (k.clone(), serde_json::json!({"files": n, "example": ex})))
            .collect::<serde_json::Map<_, _>>(),
        "chunks": state.chunk_count(),
        "forest_rows": rows.as_ref().and_then(|r| r.as_ref().ok().map(|x| x.0)),
        "map_rows": rows.as_ref().and_then(|r| r.as_ref().ok().map(|x| x.1)),
        "file_rows": rows.as_ref().and_then(|r| r.as_ref().ok().map(|x| x.2)),
        "index_error": rows.as_ref().and_then(|r| r.as_ref().err()),
        "last_sync": state.last_sync,
        "model_id": state.model_id,
        "index": readiness,
        "model": {
            "name": config.embedding_model,
            "model_dir": config.model_dir,
            "cache_dir": config.resolved_model_cache_dir(),
            "present": embed::model_present(&config),
        },
        "embedding_service": {
            "enabled": service.enabled,
            "socket": service.socket,
            "running": service.running,
        },
        "dictionary": {
            "path": &dictionary_path,
            "terms": dictionary.len(),
        },
        "onnx_runtime": match &runtime {
            Ok(r) => serde_json::json!({"found": true, "path": r.path, "version": r.version}),
            Err(e) => serde_json::json!({"found": false, "error": e.to_string()}),
        },
    });
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "repository:   {}", repo.root().display())?;
    writeln!(out, "index:        {}", readiness.message)?;
    writeln!(
        out,
        "files:        {} indexed, {} left out of the semantic index (still text-searchable)",
        state.files.len(),
        state.skipped.len()
    )?;
    for (group, (n, example)) in &left_out {
        let reason = state.skipped.get(example).map_or("", |s| s.reason.as_str());
        writeln!(out, "  {group:<12} {n:>6} files, e.g. {example}: {reason}")?;
    }
    match &rows {
        Some(Ok((f, m, w))) => writeln!(
            out,
            "tables:       forest {f} rows, files {w} rows, map {m} rows"
        )?,
        Some(Err(e)) => writeln!(out, "tables:       ERROR {e}")?,
        None => writeln!(
            out,
            "tables:       not created yet (run `code-intel index`)"
        )?,
    }
    let last = state.last_sync.map_or("never".to_string(), |t| {
        format!("{} s ago", crate::util::now_secs().saturating_sub(t))
    });
    writeln!(out, "last sync:    {last}")?;
    write_model(&mut out, &config, runtime)?;
    let line = if !service.enabled {
        "loaded by each process (shared_embedder off)".to_string()
    } else if let (true, Some(socket)) = (service.running, &service.socket) {
        format!("shared service running ({})", socket.display())
    } else {
        "shared service not running (the first serve or index starts it)".to_string()
    };
    writeln!(out, "embedding:    {line}")?;
    if dictionary.is_empty() {
        writeln!(
            out,
            "dictionary:   none at {} (Japanese words through the glossary and the bridge only; scripts/setup.sh builds it)",
            dictionary_path.display()
        )?;
    } else {
        writeln!(
            out,
            "dictionary:   JMdict, {} terms ({})",
            dictionary.len(),
            dictionary_path.display()
        )?;
    }
    Ok(())
}

/// The shared embedding service of this configuration: enabled, its
/// socket, whether it listens now (never off Unix).
struct ServiceStatus {
    enabled: bool,
    socket: Option<std::path::PathBuf>,
    running: bool,
}

impl ServiceStatus {
    fn of(config: &crate::config::Config) -> ServiceStatus {
        #[cfg(unix)]
        {
            let (socket, running) = embed::service::running(config);
            ServiceStatus {
                enabled: embed::service::enabled(config),
                socket,
                running,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = config;
            ServiceStatus {
                enabled: false,
                socket: None,
                running: false,
            }
        }
    }
}

/// Why files were left out, grouped: "lock (lock file composer.lock)"
/// counts as "lock", "binary" as itself; (count, one example) each.
fn left_out(state: &SyncState) -> std::collections::BTreeMap<String, (usize, String)> {
    let mut left_out: std::collections::BTreeMap<String, (usize, String)> = Default::default();
    for (file, s) in &state.skipped {
        let group = s
            .reason
            .split([' ', ':', '('])
            .next()
            .unwrap_or(&s.reason)
            .to_string();
        let e = left_out.entry(group).or_insert((0, file.clone()));
        e.0 += 1;
    }
    left_out
}

/// The model and ONNX Runtime lines of the text report.
fn write_model(
    out: &mut impl Write,
    config: &crate::config::Config,
    runtime: Result<embed::RuntimeInfo, embed::EmbedError>,
) -> Result<()> {
    let model_where = config
        .model_dir
        .as_ref()
        .map_or_else(|| config.resolved_model_cache_dir(), Clone::clone);
    writeln!(
        out,
        "model:        {} ({}, {})",
        config.embedding_model,
        model_where.display(),
        if embed::model_present(config) {
            "present"
        } else {
            "not downloaded yet"
        }
    )?;
    match runtime {
        Ok(r) => writeln!(
            out,
            "onnxruntime:  {} (version {})",
            r.path.display(),
            r.version.as_deref().unwrap_or("unknown")
        )?,
        Err(e) => writeln!(out, "onnxruntime:  MISSING: {e}")?,
    }
    Ok(())
}
