//! `code-intel index`: incremental sync with a progress bar on stderr.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::embed::E5_DIM;
use crate::index::{self, Progress};
use crate::store::Store;
use anyhow::Result;

use super::{load_embedder, open};

pub async fn index_cmd(
    path: &Path,
    force: bool,
    json: bool,
    vector_store: Option<String>,
) -> Result<()> {
    let (repo, mut config) = open(path)?;
    if vector_store.is_some() {
        config.vector_store = vector_store;
    }
    let embedder = load_embedder(&config).await?;
    let store = Store::open_or_rebuild(&repo.state_dir().join("lance"), E5_DIM, force).await?;
    let progress = Arc::new(Progress::default());
    let bar = indicatif::ProgressBar::new(0);
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} files {elapsed_precise} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let watcher = {
        let (progress, bar) = (Arc::clone(&progress), bar.clone());
        tokio::spawn(async move {
            loop {
                let load = |a: &std::sync::atomic::AtomicUsize| {
                    a.load(std::sync::atomic::Ordering::Relaxed) as u64
                };
                let (lexical_done, lexical_total) =
                    (load(&progress.lexical_done), load(&progress.lexical_total));
                if lexical_done < lexical_total {
                    bar.set_message("full-text");
                    bar.set_length(lexical_total);
                    bar.set_position(lexical_done);
                } else {
                    bar.set_message("embedding");
                    bar.set_length(load(&progress.files_total));
                    bar.set_position(load(&progress.files_done));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let report = index::sync(
        &repo,
        &config,
        &store,
        std::future::ready(Ok(Arc::clone(&embedder))),
        force,
        0,
        &progress,
    )
    .await;
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
