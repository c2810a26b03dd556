//! `code-intel search`: semantic search from the shell.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use code_intel::embed::E5_DIM;
use code_intel::index::{self, Progress};
use code_intel::store::Store;

use super::{CollectionArg, load_embedder, open};

pub async fn search_cmd(
    repo: &Path,
    query: &str,
    limit: usize,
    collection: CollectionArg,
    json: bool,
) -> Result<()> {
    let (repo, config) = open(repo)?;
    let embedder = load_embedder(&config).await?;
    let store = Store::open(&repo.state_dir().join("lance"), E5_DIM).await?;
    let q = query.to_string();
    let emb = Arc::clone(&embedder);
    let vector = tokio::task::spawn_blocking(move || emb.embed_query(&q)).await??;
    let forest = if collection == CollectionArg::Map {
        Vec::new()
    } else {
        store
            .search_forest(&vector, limit, &code_intel::store::Scope::default())
            .await?
    };
    let map = if collection == CollectionArg::Forest {
        Vec::new()
    } else {
        store.search_map(&vector, limit).await?
    };
    let readiness = index::readiness(&repo, &Progress::default(), &config);
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({ "results": forest, "map_results": map, "index": readiness });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    eprintln!("{}", readiness.message);
    for h in &map {
        writeln!(out, "[map {:.3}] {} → {}", h.score, h.query, h.symbols)?;
    }
    for h in &forest {
        writeln!(
            out,
            "{:.3}  {}:{}-{}  {} {}",
            h.score,
            h.file,
            h.start_line,
            h.end_line,
            h.kind,
            h.fqcn.as_deref().unwrap_or(&h.name)
        )?;
    }
    Ok(())
}
