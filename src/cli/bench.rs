//! Hidden commands for `bench/`: raw embedding throughput on a repository's
//! chunk texts, and the ranking features `bench/fit.py` fits weights on.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::embed::E5_DIM;
use crate::index;
use crate::store::Store;
use anyhow::{Context, Result};

use super::{load_embedder, open};

pub async fn bench_embed_cmd(path: &Path, dump: Option<&Path>) -> Result<()> {
    let (repo, config) = open(path)?;
    let t0 = std::time::Instant::now();
    let chunks = index::collect_chunks(&repo, &config)?;
    let chunk_seconds = t0.elapsed().as_secs_f64();
    let texts: Vec<String> = chunks.iter().map(|(c, _)| c.embedding_text()).collect();
    if let Some(d) = dump {
        std::fs::write(d, serde_json::to_vec(&texts)?)?;
    }
    let embedder = load_embedder(&config).await?;
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    let n = texts.len();
    let t1 = std::time::Instant::now();
    let vectors = tokio::task::spawn_blocking(move || embedder.embed_passages(&texts)).await??;
    let seconds = t1.elapsed().as_secs_f64();
    let v = serde_json::json!({
        "chunks": n,
        "chars": chars,
        "vectors": vectors.len(),
        "chunking_seconds": chunk_seconds,
        "embed_seconds": seconds,
        "chunks_per_second": n as f64 / seconds,
    });
    writeln!(std::io::stdout().lock(), "{v}")?;
    Ok(())
}

pub async fn rank_features_cmd(repo: &Path, limit: usize) -> Result<()> {
    let (repo, config) = open(repo)?;
    let embedder = load_embedder(&config).await?;
    let store = Store::open(&repo.state_dir().join("lance"), E5_DIM).await?;
    let ranker = crate::rank::Ranker::default();
    let graph = crate::index::CodeGraph::load(&repo);
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)?;
    let mut out = std::io::stdout().lock();
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).context("a line is not JSON")?;
        let query = v["query"]
            .as_str()
            .context("a line has no \"query\"")?
            .to_string();
        let req = crate::rank::QueryRequest {
            query,
            limit,
            fill_to: 0,
            chunks_per_file: 1,
            scope: crate::store::Scope::default(),
            not_embedded: config.index_exclude_classes.clone(),
            root: Some(repo.root().to_path_buf()),
        };
        let o = ranker
            .answer(
                &store,
                Some(Arc::clone(&embedder)),
                &config.hybrid_weights,
                &req,
                Some(&graph),
                true,
            )
            .await?;
        let files: Vec<&str> = o.files.iter().map(|f| f.file.as_str()).collect();
        let row = serde_json::json!({
            "id": v["id"],
            "query": req.query,
            "plan": o.plan,
            "files": files,
            "requested": o.requested_classes,
            "candidates": o.candidates,
            "timings": o.timings,
        });
        writeln!(out, "{row}")?;
    }
    Ok(())
}
