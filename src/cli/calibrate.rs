//! `code-intel calibrate`: re-derives the relevance, map and value/quote
//! thresholds from labelled pairs (docs/measurements.md § Calibration).

use std::io::Write;
use std::path::Path;

use super::{load_embedder, open};
use anyhow::{Context, Result};

/// `paths`: the relevance, map and value/quote pair files (`None`: the set
/// compiled in from tests/calibration/).
pub async fn calibrate_cmd(repo: &Path, paths: [Option<&Path>; 3], json: bool) -> Result<()> {
    use crate::relevance::{self, CALIBRATED, LabelledScores};
    let (_, config) = open(repo)?;
    let read = |p: Option<&Path>, default: &str| -> Result<Vec<(String, String, bool)>> {
        let text = match p {
            Some(p) => std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?,
            None => default.to_string(),
        };
        relevance::parse_pairs(&text).map_err(anyhow::Error::msg)
    };
    let rel = read(paths[0], relevance::RELEVANCE_PAIRS)?;
    let map = read(paths[1], relevance::MAP_PAIRS)?;
    let vq = read(paths[2], relevance::VALUE_QUOTE_PAIRS)?;
    let embedder = load_embedder(&config).await?;
    let model = embedder.model_id();
    let scores = tokio::task::spawn_blocking(move || -> Result<LabelledScores> {
        let score = |pairs: &[(String, String, bool)], symbols: bool| -> Result<Vec<(f32, bool)>> {
            let input: Vec<(String, String)> = pairs
                .iter()
                .map(|(a, b, _)| {
                    let b = if symbols {
                        relevance::symbol_text(b)
                    } else {
                        b.clone()
                    };
                    (a.clone(), b)
                })
                .collect();
            let s = relevance::score_pairs(embedder.as_ref(), &input)?;
            Ok(s.into_iter().zip(pairs.iter().map(|p| p.2)).collect())
        };
        // A value that contradicts its quote is rejected by the lexical rule
        // before any threshold: scored 0 here, so the threshold is chosen on
        // what the rule leaves.
        let value_quote = score(&vq, false)?
            .into_iter()
            .zip(&vq)
            .map(|((s, label), (v, q, _))| {
                let s = if crate::rank::plan::contradiction(v, q).is_some() {
                    0.0
                } else {
                    s
                };
                (s, label)
            })
            .collect();
        Ok(LabelledScores {
            relevance: score(&rel, true)?,
            map: score(&map, false)?,
            value_quote,
        })
    })
    .await??;
    let chosen = relevance::choose(&scores);
    let rel_scores = &scores.relevance;
    let v = serde_json::json!({
        "model": model,
        "target_precision": relevance::TARGET_PRECISION,
        "chosen": { "thresholds": chosen, "metrics": relevance::evaluate(&chosen, &scores) },
        "compiled": {
            "thresholds": CALIBRATED,
            "metrics": relevance::evaluate(&CALIBRATED, &scores),
            "documented": relevance::CALIBRATED_METRICS
                .iter()
                .map(|(tier, p, r)| serde_json::json!({"tier": tier, "precision": p, "recall": r}))
                .collect::<Vec<_>>(),
        },
        "score_range": {
            "related": min_max(rel_scores.iter().filter(|s| s.1).map(|s| s.0)),
            "unrelated": min_max(rel_scores.iter().filter(|s| !s.1).map(|s| s.0)),
            "consistent": min_max(scores.value_quote.iter().filter(|s| s.1).map(|s| s.0)),
            "inconsistent": min_max(scores.value_quote.iter().filter(|s| !s.1).map(|s| s.0)),
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
            "{label}: fact >= {:.5}, reject < {:.5}, map >= {:.5}, value/quote < {:.5}",
            t["fact"].as_f64().unwrap_or(0.0),
            t["reject"].as_f64().unwrap_or(0.0),
            t["map_short_circuit"].as_f64().unwrap_or(0.0),
            t["value_quote"].as_f64().unwrap_or(0.0)
        )?;
        for tier in ["fact", "reject", "map", "value_quote"] {
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
