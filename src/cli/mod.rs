//! The command line (clap): one file per command; `run` dispatches and
//! maps results to exit codes. The binary edge, so anyhow lives here and in
//! `main.rs` only.

mod bench;
mod calibrate;
mod doctor;
mod hook;
mod index;
mod init;
mod insights;
mod model;
mod search;
mod serve;
mod status;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::Config;
use crate::embed::Embedder;
use crate::repo::Repo;
use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "code-intel",
    version,
    about = "Code intelligence for coding agents over MCP"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
        /// Shared vector store (LanceDB URI: s3://bucket/prefix, gs://…,
        /// az://…, or a directory): vectors found there are not embedded,
        /// new ones are added. Overrides `vector_store` in config.
        #[arg(long, value_name = "URI")]
        vector_store: Option<String>,
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
    /// The files a request most likely touches and what else the change
    /// needs ("also check"), as the query tool answers (the same ranking,
    /// the same text; --json for the structured reply).
    Query {
        /// The request, in Japanese or English.
        query: String,
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Files to rank (1-50; default 10, then more while the reply shows
        /// fewer than 20 with "also check", as the tool does).
        #[arg(short = 'n', long)]
        limit: Option<usize>,
        /// Best chunks per file (1-5).
        #[arg(long, default_value_t = 2)]
        chunks_per_file: usize,
        /// Token budget of the text (as the tool's max_tokens).
        #[arg(long, default_value_t = crate::server::QUERY_MAX_TOKENS)]
        max_tokens: usize,
        /// Print the structured reply as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Files likely to change with the given files or symbol: code-graph
    /// edges, a method's callers and co-change history, with reasons (as the
    /// related_files tool).
    Related {
        /// Repo-relative files the change starts from.
        files: Vec<String>,
        /// Or a symbol: its definitions' files; a method's callers are added.
        #[arg(long)]
        symbol: Option<String>,
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Files to show.
        #[arg(short = 'n', long, default_value_t = 10)]
        limit: usize,
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
    /// Re-derive the relevance, map and value/quote thresholds from labelled pairs and
    /// report precision/recall per tier (docs/measurements.md § Calibration).
    Calibrate {
        /// (NL term, symbol, related 0/1) TSV; default: the set compiled in
        /// from tests/calibration/relevance_pairs.tsv.
        #[arg(long)]
        pairs: Option<PathBuf>,
        /// (agreement query, new request, same task 0/1) TSV; default:
        /// tests/calibration/map_pairs.tsv as compiled in.
        #[arg(long)]
        map_pairs: Option<PathBuf>,
        /// (slot value, quote, consistent 0/1, language, kind, group) TSV;
        /// default: tests/calibration/value_quote_fresh.tsv as compiled in.
        #[arg(long)]
        value_quote_pairs: Option<PathBuf>,
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
    /// The shared embedding service `serve` and `index` start (embed::service;
    /// not run by hand).
    #[cfg(unix)]
    #[command(hide = true)]
    EmbedService {
        /// The Unix socket to listen on.
        #[arg(long)]
        socket: PathBuf,
        /// The starting process's configuration (JSON).
        #[arg(long)]
        config: String,
    },
    /// The embedding model's files.
    Model {
        #[command(subcommand)]
        action: ModelAction,
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
pub enum HookEvent {
    /// Claude Code PreToolUse: denies Edit/Write/MultiEdit/NotebookEdit that
    /// the active code-intel session may not make; allows everything else.
    PreToolUse,
}

#[derive(Subcommand)]
pub enum ModelAction {
    /// Download ONNX Runtime (when none is found) and the default model ahead
    /// of their first use (HF_ENDPOINT, HF_HOME, HF_TOKEN and HTTPS_PROXY are
    /// honoured; an interrupted model download resumes). No model download
    /// when `model_dir` is set.
    Pull {
        /// Repository whose config names the model cache (default: current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Print the outcome as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Embed texts with the configured embedder (local model or
    /// `embedding_endpoint`) and print `{"model_id", "dim", "vectors"}` as
    /// JSON: to compare two embedders or check an endpoint by hand.
    Embed {
        /// Texts to embed.
        #[arg(required = true)]
        texts: Vec<String>,
        /// Embed as queries (`query: ` prefix) instead of passages.
        #[arg(long)]
        query: bool,
        #[arg(long, default_value = ".")]
        repo: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
pub enum CollectionArg {
    Forest,
    Map,
    Auto,
}

/// Runs one command; the exit code says how it went (0 ok, 1 error, 2 a
/// `doctor` check failed or the hook blocks the tool call).
pub async fn run(cli: Cli) -> Result<ExitCode> {
    let ok = |r: Result<()>| r.map(|()| ExitCode::SUCCESS);
    match cli.command {
        Command::Serve { repo } => ok(serve::serve_cmd(&repo).await),
        Command::Index {
            path,
            force,
            json,
            vector_store,
        } => ok(index::index_cmd(&path, force, json, vector_store).await),
        Command::Search {
            query,
            repo,
            limit,
            collection,
            json,
        } => ok(search::search_cmd(&repo, &query, limit, collection, json).await),
        Command::Query {
            query,
            repo,
            limit,
            chunks_per_file,
            max_tokens,
            json,
        } => ok(search::query_cmd(
            &repo,
            &query,
            search::QueryArgs {
                limit,
                chunks_per_file,
                max_tokens,
            },
            json,
        )
        .await),
        Command::Related {
            files,
            symbol,
            repo,
            limit,
            json,
        } => ok(search::related_cmd(
            &repo,
            &files,
            symbol.as_deref(),
            limit,
            json,
        )),
        Command::Model {
            action: ModelAction::Pull { repo, json },
        } => ok(model::pull_cmd(&repo, json).await),
        Command::Model {
            action: ModelAction::Embed { texts, query, repo },
        } => ok(model::embed_cmd(&repo, &texts, query).await),
        Command::Status { repo, json } => ok(status::status_cmd(&repo, json).await),
        #[cfg(unix)]
        Command::EmbedService { socket, config } => ok(serde_json::from_str::<Config>(&config)
            .map_err(anyhow::Error::from)
            .and_then(|c| crate::embed::service::serve(&socket, &c))),
        Command::Insights { repo, json } => ok(insights::insights_cmd(&repo, json)),
        Command::Init {
            path,
            hooks,
            cursor,
            dry_run,
        } => ok(init::init_cmd(&path, hooks, cursor, dry_run)),
        Command::Hook {
            event: HookEvent::PreToolUse,
        } => hook::hook_cmd(),
        Command::Doctor { repo, json } => doctor::doctor_cmd(&repo, json).await,
        Command::Calibrate {
            pairs,
            map_pairs,
            value_quote_pairs,
            repo,
            json,
        } => ok(calibrate::calibrate_cmd(
            &repo,
            [
                pairs.as_deref(),
                map_pairs.as_deref(),
                value_quote_pairs.as_deref(),
            ],
            json,
        )
        .await),
        Command::BenchEmbed { path, dump } => {
            ok(bench::bench_embed_cmd(&path, dump.as_deref()).await)
        }
        Command::RankFeatures { repo, limit } => ok(bench::rank_features_cmd(&repo, limit).await),
    }
}

pub(crate) fn open(repo: &Path) -> Result<(Repo, Config)> {
    let repo =
        Repo::open(repo).with_context(|| format!("cannot open repository {}", repo.display()))?;
    let config = Config::load(repo.root())?;
    let repo = repo.with_sensitive_patterns(&config.sensitive_patterns);
    Ok((repo, config))
}

pub(crate) async fn load_embedder(config: &Config) -> Result<Arc<dyn Embedder>> {
    let config = config.clone();
    Ok(tokio::task::spawn_blocking(move || crate::embed::load(&config)).await??)
}
