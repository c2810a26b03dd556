//! The `code-intel` binary: CLI (clap), tracing to stderr, exit codes. The
//! only place that uses anyhow.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use code_intel::config::Config;
use code_intel::embed::{self, E5_DIM, Embedder, FastEmbedder};
use code_intel::index::{self, Progress, SyncState};
use code_intel::repo::Repo;
use code_intel::server::CodeIntel;
use code_intel::store::Store;
use rmcp::ServiceExt;
use std::io::Write;

#[derive(Parser)]
#[command(
    name = "code-intel",
    version,
    about = "Code intelligence for coding agents over MCP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the repository over MCP on stdio (what .mcp.json runs).
    Serve {
        /// Repository root (default: current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
    },
    /// Sync the semantic index: only added, modified and deleted files.
    Index {
        /// Repository root (default: current directory).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Re-chunk and re-embed everything.
        #[arg(long)]
        force: bool,
        /// Print the summary as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Semantic search from the shell.
    Search {
        /// What the code does, in Japanese or English.
        query: String,
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Results to show.
        #[arg(short = 'n', long, default_value_t = 10)]
        limit: usize,
        #[arg(long, value_enum, default_value_t = CollectionArg::Auto)]
        collection: CollectionArg,
        /// Print results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Failure correlations from recorded session outcomes.
    Insights {
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Re-derive the relevance and map thresholds from labelled pairs and
    /// report precision/recall per tier (README § Calibration).
    Calibrate {
        /// (NL term, symbol, related 0/1) TSV; default: the set compiled in
        /// from tests/calibration/relevance_pairs.tsv.
        #[arg(long)]
        pairs: Option<PathBuf>,
        /// (agreement query, new request, same task 0/1) TSV; default:
        /// tests/calibration/map_pairs.tsv as compiled in.
        #[arg(long)]
        map_pairs: Option<PathBuf>,
        /// Repository whose config names the model (default: current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Raw embedding throughput on a repository's chunk texts (for bench/).
    #[command(hide = true)]
    BenchEmbed {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Write the embedded texts (JSON list) here, e.g. to count tokens.
        #[arg(long)]
        dump: Option<PathBuf>,
    },
    /// Files, chunks, last sync, model and ONNX Runtime state.
    Status {
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum CollectionArg {
    Forest,
    Map,
    Auto,
}

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CODE_INTEL_LOG")
                .unwrap_or_else(|_| "code_intel=info,warn".into()),
        )
        .with_ansi(false)
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(run(cli));
    // A model load or sync still running on the blocking pool must not keep
    // the process alive after the client has gone.
    runtime.shutdown_timeout(Duration::from_millis(500));
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn open(repo: &Path) -> Result<(Repo, Config)> {
    let repo =
        Repo::open(repo).with_context(|| format!("cannot open repository {}", repo.display()))?;
    let config = Config::load(repo.root())?;
    Ok((repo, config))
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Serve { repo } => {
            let (repo, config) = open(&repo)?;
            tracing::info!("serving {}", repo.root().display());
            let server = CodeIntel::new(repo, config);
            server.start_background();
            let service = server
                .serve(rmcp::transport::stdio())
                .await
                .context("MCP handshake failed")?;
            service
                .waiting()
                .await
                .context("MCP server stopped with an error")?;
            Ok(())
        }
        Command::Index { path, force, json } => index_cmd(&path, force, json).await,
        Command::Search {
            query,
            repo,
            limit,
            collection,
            json,
        } => search_cmd(&repo, &query, limit, collection, json).await,
        Command::Status { repo, json } => status_cmd(&repo, json).await,
        Command::Insights { repo, json } => insights_cmd(&repo, json),
        Command::Calibrate {
            pairs,
            map_pairs,
            repo,
            json,
        } => calibrate_cmd(&repo, pairs.as_deref(), map_pairs.as_deref(), json).await,
        Command::BenchEmbed { path, dump } => bench_embed_cmd(&path, dump.as_deref()).await,
    }
}

async fn load_embedder(config: &Config) -> Result<Arc<dyn Embedder>> {
    let config = config.clone();
    let m = tokio::task::spawn_blocking(move || FastEmbedder::load(&config)).await??;
    Ok(Arc::new(m))
}

async fn index_cmd(path: &Path, force: bool, json: bool) -> Result<()> {
    let (repo, config) = open(path)?;
    let embedder = load_embedder(&config).await?;
    let store = Store::open_or_rebuild(&repo.state_dir().join("lance"), E5_DIM, force).await?;
    let progress = Arc::new(Progress::default());
    let bar = indicatif::ProgressBar::new(0);
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} indexing [{bar:30}] {pos}/{len} files {elapsed_precise} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let watcher = {
        let (progress, bar) = (Arc::clone(&progress), bar.clone());
        tokio::spawn(async move {
            loop {
                bar.set_length(
                    progress
                        .files_total
                        .load(std::sync::atomic::Ordering::Relaxed) as u64,
                );
                bar.set_position(
                    progress
                        .files_done
                        .load(std::sync::atomic::Ordering::Relaxed) as u64,
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let report = index::sync(&repo, &config, &store, &embedder, force, &progress).await;
    watcher.abort();
    bar.finish_and_clear();
    let report = report?;
    if json {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        eprintln!("{report}");
    }
    Ok(())
}

async fn search_cmd(
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
        store.search_forest(&vector, limit, None).await?
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

async fn status_cmd(repo: &Path, json: bool) -> Result<()> {
    let (repo, config) = open(repo)?;
    let state = SyncState::load(&repo);
    let readiness = index::readiness(&repo, &Progress::default(), &config);
    let runtime = embed::find_runtime(&config);
    let lance = repo.state_dir().join("lance");
    let rows = if lance.exists() {
        match Store::open(&lance, E5_DIM).await {
            Ok(s) => Some(Ok((s.forest_rows().await?, s.map_rows().await?))),
            Err(e) => Some(Err(e.to_string())),
        }
    } else {
        None
    };
    let v = serde_json::json!({
        "repo": repo.root(),
        "files_indexed": state.files.len(),
        "files_skipped": state.skipped.len(),
        "chunks": state.chunk_count(),
        "forest_rows": rows.as_ref().and_then(|r| r.as_ref().ok().map(|x| x.0)),
        "map_rows": rows.as_ref().and_then(|r| r.as_ref().ok().map(|x| x.1)),
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
        "files:        {} indexed, {} skipped",
        state.files.len(),
        state.skipped.len()
    )?;
    match &rows {
        Some(Ok((f, m))) => writeln!(out, "tables:       forest {f} rows, map {m} rows")?,
        Some(Err(e)) => writeln!(out, "tables:       ERROR {e}")?,
        None => writeln!(
            out,
            "tables:       not created yet (run `code-intel index`)"
        )?,
    }
    let last = state.last_sync.map_or("never".to_string(), |t| {
        format!("{} s ago", index::now_secs().saturating_sub(t))
    });
    writeln!(out, "last sync:    {last}")?;
    let model_where = config
        .model_dir
        .as_ref()
        .map_or_else(|| config.resolved_model_cache_dir(), Clone::clone);
    writeln!(
        out,
        "model:        {} ({}, {})",
        config.embedding_model,
        model_where.display(),
        if embed::model_present(&config) {
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

async fn bench_embed_cmd(path: &Path, dump: Option<&Path>) -> Result<()> {
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

async fn calibrate_cmd(
    repo: &Path,
    pairs: Option<&Path>,
    map_pairs: Option<&Path>,
    json: bool,
) -> Result<()> {
    use code_intel::relevance::{self, CALIBRATED};
    let (_, config) = open(repo)?;
    let read = |p: Option<&Path>, default: &str| -> Result<Vec<(String, String, bool)>> {
        let text = match p {
            Some(p) => std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?,
            None => default.to_string(),
        };
        relevance::parse_pairs(&text).map_err(anyhow::Error::msg)
    };
    let rel = read(pairs, relevance::RELEVANCE_PAIRS)?;
    let map = read(map_pairs, relevance::MAP_PAIRS)?;
    let embedder = load_embedder(&config).await?;
    let model = embedder.model_id();
    let (rel_scores, map_scores) = tokio::task::spawn_blocking(move || -> Result<_> {
        let rel_in: Vec<(String, String)> = rel
            .iter()
            .map(|(t, s, _)| (t.clone(), relevance::symbol_text(s)))
            .collect();
        let map_in: Vec<(String, String)> =
            map.iter().map(|(a, b, _)| (a.clone(), b.clone())).collect();
        let r = relevance::score_pairs(embedder.as_ref(), &rel_in)?;
        let m = relevance::score_pairs(embedder.as_ref(), &map_in)?;
        Ok((
            r.into_iter()
                .zip(rel.iter().map(|p| p.2))
                .collect::<Vec<_>>(),
            m.into_iter()
                .zip(map.iter().map(|p| p.2))
                .collect::<Vec<_>>(),
        ))
    })
    .await??;
    let chosen = relevance::choose(&rel_scores, &map_scores);
    let v = serde_json::json!({
        "model": model,
        "target_precision": relevance::TARGET_PRECISION,
        "chosen": { "thresholds": chosen, "metrics": relevance::evaluate(&chosen, &rel_scores, &map_scores) },
        "compiled": {
            "thresholds": CALIBRATED,
            "metrics": relevance::evaluate(&CALIBRATED, &rel_scores, &map_scores),
            "documented": relevance::CALIBRATED_METRICS
                .iter()
                .map(|(tier, p, r)| serde_json::json!({"tier": tier, "precision": p, "recall": r}))
                .collect::<Vec<_>>(),
        },
        "score_range": {
            "related": min_max(rel_scores.iter().filter(|s| s.1).map(|s| s.0)),
            "unrelated": min_max(rel_scores.iter().filter(|s| !s.1).map(|s| s.0)),
        },
    });
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    for label in ["chosen", "compiled"] {
        let t = &v[label]["thresholds"];
        let m = &v[label]["metrics"];
        writeln!(
            out,
            "{label}: fact >= {:.4}, reject < {:.4}, map >= {:.4}",
            t["fact"].as_f64().unwrap_or(0.0),
            t["reject"].as_f64().unwrap_or(0.0),
            t["map_short_circuit"].as_f64().unwrap_or(0.0)
        )?;
        for tier in ["fact", "reject", "map"] {
            writeln!(
                out,
                "  {tier:<6} precision {:.3} recall {:.3} ({} decided)",
                m[tier]["precision"].as_f64().unwrap_or(0.0),
                m[tier]["recall"].as_f64().unwrap_or(0.0),
                m[tier]["decided"]
            )?;
        }
        writeln!(
            out,
            "  grey   related {} unrelated {}",
            m["grey"][0], m["grey"][1]
        )?;
    }
    Ok(())
}

fn min_max(it: impl Iterator<Item = f32>) -> [f32; 2] {
    it.fold([f32::MAX, f32::MIN], |[lo, hi], x| [lo.min(x), hi.max(x)])
}

fn insights_cmd(repo: &Path, json: bool) -> Result<()> {
    let (repo, _) = open(repo)?;
    let store = code_intel::learn::SessionStore::new(&repo.state_dir());
    let insights = code_intel::learn::insights(&store.read_log("outcomes"));
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&insights)?)?;
    } else {
        write!(out, "{}", insights.summary())?;
    }
    Ok(())
}
