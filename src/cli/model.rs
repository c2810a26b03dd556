//! `code-intel model pull`: ONNX Runtime (when none is found) and the
//! default model into the user cache ahead of their first use
//! (src/runtime.rs, src/model.rs); `code-intel model embed`: vectors of the
//! configured embedder.

use std::io::Write;
use std::path::Path;

use crate::config::Config;
use crate::{embed, model};
use anyhow::Result;

pub async fn pull_cmd(repo: &Path, json: bool) -> Result<()> {
    let config = Config::load(repo)?;
    let config2 = config.clone();
    let runtime =
        tokio::task::spawn_blocking(move || embed::find_or_download_runtime(&config2)).await??;
    let mut out = std::io::stdout().lock();
    if let Some(dir) = &config.model_dir {
        let present = embed::model_present(&config);
        if json {
            writeln!(
                out,
                "{}",
                serde_json::json!({"onnx_runtime": runtime.path, "model_dir": dir, "present": present, "downloaded": []})
            )?;
        } else {
            writeln!(out, "ONNX Runtime: {}", runtime.path.display())?;
            writeln!(
                out,
                "model_dir is set ({}): nothing to download{}",
                dir.display(),
                if present {
                    ""
                } else {
                    "; but it lacks model.onnx or tokenizer files"
                }
            )?;
        }
        anyhow::ensure!(present, "model_dir {} is incomplete", dir.display());
        return Ok(());
    }
    let pulled = tokio::task::spawn_blocking(move || model::pull(&config, true)).await??;
    if json {
        let mut v = serde_json::to_value(&pulled)?;
        v["onnx_runtime"] = serde_json::json!(runtime.path);
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "ONNX Runtime: {}", runtime.path.display())?;
    if pulled.downloaded.is_empty() {
        writeln!(
            out,
            "{} is present in {}",
            model::MODEL_REPO,
            pulled.cache.display()
        )?;
    } else {
        writeln!(
            out,
            "downloaded {} ({} files, {} MB) to {}",
            model::MODEL_REPO,
            pulled.downloaded.len(),
            pulled.bytes.div_ceil(1_000_000),
            pulled.cache.display()
        )?;
    }
    Ok(())
}

pub async fn embed_cmd(repo: &Path, texts: &[String], query: bool) -> Result<()> {
    let config = Config::load(repo)?;
    let embedder = super::load_embedder(&config).await?;
    let texts = texts.to_vec();
    let emb = std::sync::Arc::clone(&embedder);
    let vectors = tokio::task::spawn_blocking(move || {
        if query {
            emb.embed_queries(&texts)
        } else {
            emb.embed_passages(&texts)
        }
    })
    .await??;
    let out = serde_json::json!({
        "model_id": embedder.model_id(),
        "dim": embedder.dim(),
        "vectors": vectors,
    });
    writeln!(std::io::stdout().lock(), "{out}")?;
    Ok(())
}
