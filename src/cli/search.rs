//! `code-intel search`, `code-intel query` and `code-intel related`:
//! semantic search, the `query` tool's answer and the change set of a file
//! from the shell.

use std::io::Write;
use std::path::Path;

use crate::embed::E5_DIM;
use crate::index::{self, Progress};
use crate::rank::{Collection, semantic_search};
use crate::store::Store;
use anyhow::Result;

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
    let collection = match collection {
        CollectionArg::Forest => Collection::Forest,
        CollectionArg::Map => Collection::Map,
        CollectionArg::Auto => Collection::Auto,
    };
    let hits = semantic_search(
        &crate::rank::Ranker::default(),
        &store,
        embedder,
        query,
        collection,
        limit,
        &crate::store::Scope::default(),
    )
    .await?;
    let (forest, map) = (hits.results, hits.map_results);
    let readiness = index::readiness(&repo, &Progress::default(), &config);
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({
            "results": forest,
            "map_results": map,
            "short_circuit": hits.short_circuit,
            "index": readiness,
        });
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

/// How much `code-intel query` shows (the `query` tool's arguments).
pub struct QueryArgs {
    /// `None`: the tool's default (`rank::limits`).
    pub limit: Option<usize>,
    pub chunks_per_file: usize,
    pub max_tokens: usize,
}

/// The `query` tool's answer from the shell: the same [`crate::rank::Ranker::answer`]
/// over the same index and code graph, laid out as the tool lays it out.
pub async fn query_cmd(repo: &Path, query: &str, args: QueryArgs, json: bool) -> Result<()> {
    anyhow::ensure!(
        !query.trim().is_empty(),
        "the query is empty: describe what you want to change or find"
    );
    let (limit, fill_to) = crate::rank::limits(args.limit);
    anyhow::ensure!(
        (1..=50).contains(&limit) && (1..=5).contains(&args.chunks_per_file),
        "--limit must be 1-50 and --chunks-per-file 1-5"
    );
    let (repo, config) = open(repo)?;
    let embedder = load_embedder(&config).await?;
    let store = Store::open(&repo.state_dir().join("lance"), E5_DIM).await?;
    let graph = index::CodeGraph::load(&repo);
    let req = crate::rank::QueryRequest {
        query: query.to_string(),
        limit,
        fill_to,
        chunks_per_file: args.chunks_per_file,
        scope: crate::store::Scope::default(),
        not_embedded: config.index_exclude_classes.clone(),
        root: Some(repo.root().to_path_buf()),
    };
    let answer = crate::rank::Ranker::default()
        .answer(
            &store,
            Some(embedder),
            &config.hybrid_weights,
            &req,
            Some(&graph),
            false,
        )
        .await?;
    let readiness = index::readiness(&repo, &Progress::default(), &config);
    let (result, text, _) = crate::server::query_reply(answer, readiness, args.max_tokens);
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&result)?)?;
    } else {
        write!(out, "{text}")?;
    }
    Ok(())
}

pub fn related_cmd(
    repo: &Path,
    files: &[String],
    symbol: Option<&str>,
    limit: usize,
    json: bool,
) -> Result<()> {
    let (repo, config) = open(repo)?;
    let symbols = crate::search::symbols::SymbolCache::default();
    let seeds =
        index::seeds(&repo, &config, &symbols, files, symbol).map_err(anyhow::Error::msg)?;
    let graph = index::CodeGraph::load(&repo);
    let related = index::related_files(&repo, &config, &symbols, &graph, &seeds, symbol, limit);
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({
            "seeds": seeds,
            "files": related,
            "graph_edges": graph.graph.len(),
            "history_commits": graph.history.commits,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    for (i, r) in related.iter().enumerate() {
        write!(out, "{}", crate::server::related_line(i, r))?;
    }
    Ok(())
}
