//! `code-intel calibrate`: re-derives the relevance and map thresholds from
//! labelled pairs (README § Calibration).

use std::io::Write;
use std::path::Path;

use super::{load_embedder, open};
use anyhow::{Context, Result};

pub async fn calibrate_cmd(
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
