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
    /// Set a repository up: .code-intel/config.json, .gitignore, .mcp.json,
    /// Claude Code /code and /outcome commands (and with --hooks the write
    /// gate hook); prints the Cursor snippet (written with --cursor).
    Init {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Install the Claude Code PreToolUse hook in .claude/settings.json.
        #[arg(long)]
        hooks: bool,
        /// Write .cursor/mcp.json too.
        #[arg(long)]
        cursor: bool,
        /// Show what would change; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Hooks for coding clients (reads the client's JSON on stdin).
    Hook {
        #[command(subcommand)]
        event: HookEvent,
    },
    /// Check the installation and the index; explain each problem with its fix.
    Doctor {
        #[arg(long, default_value = ".")]
        repo: PathBuf,
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
    /// Runs `query`'s ranking on JSON lines `{"query": …}` from stdin and
    /// prints, per line, the plan, the ranked files and every candidate
    /// with its features (for bench/fit.py).
    #[command(hide = true)]
    RankFeatures {
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Files ranked per query.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Files, chunks, last sync, model and ONNX Runtime state.
    Status {
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum HookEvent {
    /// Claude Code PreToolUse: denies Edit/Write/MultiEdit/NotebookEdit that
    /// the active code-intel session may not make; allows everything else.
    PreToolUse,
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
        Command::Init {
            path,
            hooks,
            cursor,
            dry_run,
        } => init_cmd(&path, hooks, cursor, dry_run),
        Command::Hook {
            event: HookEvent::PreToolUse,
        } => hook_cmd(),
        Command::Doctor { repo, json } => doctor_cmd(&repo, json).await,
        Command::Calibrate {
            pairs,
            map_pairs,
            repo,
            json,
        } => calibrate_cmd(&repo, pairs.as_deref(), map_pairs.as_deref(), json).await,
        Command::BenchEmbed { path, dump } => bench_embed_cmd(&path, dump.as_deref()).await,
        Command::RankFeatures { repo, limit } => rank_features_cmd(&repo, limit).await,
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
    // Why files were left out, grouped: "lock (lock file composer.lock)"
    // counts as "lock", "binary" as itself; one example each.
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
        "files:        {} indexed, {} left out of the semantic index (still text-searchable)",
        state.files.len(),
        state.skipped.len()
    )?;
    for (group, (n, example)) in &left_out {
        let reason = state.skipped.get(example).map_or("", |s| s.reason.as_str());
        writeln!(out, "  {group:<12} {n:>6} files, e.g. {example}: {reason}")?;
    }
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

async fn rank_features_cmd(repo: &Path, limit: usize) -> Result<()> {
    let (repo, config) = open(repo)?;
    let embedder = load_embedder(&config).await?;
    let store = Store::open(&repo.state_dir().join("lance"), E5_DIM).await?;
    let ranker = code_intel::rank::Ranker::default();
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)?;
    let mut out = std::io::stdout().lock();
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).context("a line is not JSON")?;
        let query = v["query"]
            .as_str()
            .context("a line has no \"query\"")?
            .to_string();
        let req = code_intel::rank::Request {
            query,
            limit,
            chunks_per_file: 1,
            scope: code_intel::store::Scope::default(),
        };
        let o = ranker
            .run(
                &store,
                Arc::clone(&embedder),
                &config.hybrid_weights,
                &req,
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

fn init_cmd(path: &Path, hooks: bool, cursor: bool, dry_run: bool) -> Result<()> {
    let repo =
        Repo::open(path).with_context(|| format!("cannot open repository {}", path.display()))?;
    let exe = std::env::current_exe().context("cannot locate the code-intel executable")?;
    let changes = code_intel::client::init(&repo, &exe, hooks, cursor, dry_run)
        .map_err(anyhow::Error::msg)?;
    let mut out = std::io::stdout().lock();
    for c in &changes {
        writeln!(
            out,
            "{:<10} {}",
            if dry_run && c.action != "unchanged" {
                format!("would be {}", c.action)
            } else {
                c.action.clone()
            },
            c.file
        )?;
    }
    if !cursor {
        writeln!(
            out,
            "\nCursor: put this in .cursor/mcp.json (or run init --cursor):\n{}",
            code_intel::client::mcp_snippet(&exe)
        )?;
    }
    Ok(())
}

fn hook_cmd() -> Result<()> {
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)?;
    // A payload we cannot read is allowed: the hook must never wedge the client.
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&input) else {
        return Ok(());
    };
    if let Some(deny) = code_intel::client::pre_tool_use(&v) {
        writeln!(std::io::stdout().lock(), "{deny}")?;
    }
    Ok(())
}

async fn doctor_cmd(repo: &Path, json: bool) -> Result<()> {
    let mut checks: Vec<(&str, bool, String)> = Vec::new();
    let repo =
        Repo::open(repo).with_context(|| format!("cannot open repository {}", repo.display()))?;
    checks.push((
        "binary",
        true,
        format!("code-intel {}", env!("CARGO_PKG_VERSION")),
    ));
    let config = match Config::load(repo.root()) {
        Ok(c) => {
            checks.push((
                "config",
                true,
                "valid (.code-intel/config.json or defaults)".into(),
            ));
            c
        }
        Err(e) => {
            checks.push(("config", false, format!("{e}")));
            Config::default()
        }
    };
    match embed::find_runtime(&config) {
        Ok(r) => checks.push((
            "onnx_runtime",
            true,
            format!(
                "{} (version {})",
                r.path.display(),
                r.version.as_deref().unwrap_or("unknown")
            ),
        )),
        Err(e) => checks.push(("onnx_runtime", false, e.to_string())),
    }
    let model_size = |dir: &Path| -> u64 { walk_size(dir) };
    match &config.model_dir {
        Some(dir) if embed::model_present(&config) => checks.push(("model", true, format!("{} ({} MB)", dir.display(), model_size(dir) / 1_000_000))),
        Some(dir) => checks.push(("model", false, format!("model_dir {} lacks model.onnx or tokenizer files; point model_dir at a complete model directory", dir.display()))),
        None if embed::model_present(&config) => {
            let dir = config.resolved_model_cache_dir();
            checks.push(("model", true, format!("{} in {} ({} MB)", config.embedding_model, dir.display(), model_size(&dir) / 1_000_000)))
        }
        None => checks.push(("model", true, format!("not downloaded yet: fastembed fetches {} (~470 MB) into {} on first use; offline, set model_dir", config.embedding_model, config.resolved_model_cache_dir().display()))),
    }
    let unknown = std::fs::read_to_string(repo.state_dir().join("config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .map(|v| code_intel::config::unknown_keys(&v))
        .unwrap_or_default();
    if !unknown.is_empty() {
        checks.push((
            "config_keys",
            true,
            format!(
                "unknown keys ignored: {} (typo? see .code-intel.example)",
                unknown.join(", ")
            ),
        ));
    }
    let state = SyncState::load(&repo);
    let lance = repo.state_dir().join("lance");
    if lance.exists() {
        match Store::open(&lance, E5_DIM).await {
            Ok(s) => {
                let rows = s.forest_rows().await.unwrap_or(0);
                let ok = rows == state.chunk_count();
                checks.push((
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
            Err(e) => checks.push(("index", false, e.to_string())),
        }
        let stale = index::stale_files(&repo, &config, &state);
        checks.push(("index_freshness", true, if stale == 0 { "no file changed since the last sync".into() } else { format!("{stale} file(s) changed since the last sync: run `code-intel index` (serve syncs on start)") }));
    } else {
        checks.push((
            "index",
            true,
            "not built yet: run `code-intel index`".into(),
        ));
    }
    let mcp = std::fs::read_to_string(repo.root().join(".mcp.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let registered = mcp
        .as_ref()
        .is_some_and(|v| !v["mcpServers"]["code-intel"].is_null());
    checks.push((
        "mcp_json",
        true,
        if registered {
            ".mcp.json registers code-intel".into()
        } else {
            "no code-intel entry in .mcp.json: run `code-intel init`".into()
        },
    ));
    let settings =
        std::fs::read_to_string(repo.root().join(".claude/settings.json")).unwrap_or_default();
    checks.push((
        "hook",
        true,
        if settings.contains("hook pre-tool-use") {
            "Claude Code PreToolUse hook installed".into()
        } else {
            "write-gate hook not installed: run `code-intel init --hooks`".into()
        },
    ));
    let broken = checks.iter().filter(|c| !c.1).count();
    let mut out = std::io::stdout().lock();
    if json {
        let v: Vec<_> = checks
            .iter()
            .map(|(n, ok, m)| serde_json::json!({"check": n, "ok": ok, "message": m}))
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"ok": broken == 0, "checks": v}))?
        )?;
    } else {
        for (name, ok, msg) in &checks {
            writeln!(
                out,
                "{} {name:<16} {msg}",
                if *ok { "ok  " } else { "FAIL" }
            )?;
        }
    }
    if broken > 0 {
        drop(out);
        std::process::exit(2);
    }
    Ok(())
}

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
