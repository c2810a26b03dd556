//! `code-intel calibrate`: re-derives the relevance, map and value/quote
//! thresholds from labelled pairs (docs/measurements.md § Calibration).

use std::io::Write;
use std::path::Path;

use super::{load_embedder, open};
use anyhow::{Context, Result};

/// `paths`: the relevance, map and value/quote pair files (`None`: the set
/// compiled in from tests/calibration/).
pub async fn calibrate_cmd(repo: &Path, paths: [Option<&Path>; 3], json: bool) -> Result<()> {
    use crate::rank::value_check::{self, ValuePair};
    use crate::relevance::{self, CALIBRATED, LabelledScores};
    let (_, config) = open(repo)?;
    let text = |p: Option<&Path>, default: &str| -> Result<String> {
        match p {
            Some(p) => {
                std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
            }
            None => Ok(default.to_string()),
        }
    };
    let read = |p: Option<&Path>, default: &str| -> Result<Vec<(String, String, bool)>> {
        relevance::parse_pairs(&text(p, default)?).map_err(anyhow::Error::msg)
    };
    let rel = read(paths[0], relevance::RELEVANCE_PAIRS)?;
    let map = read(paths[1], relevance::MAP_PAIRS)?;
    let halves = (
        relevance::reporting_half(&rel, 2),
        relevance::reporting_half(&map, 1),
    );
    let vq: Vec<ValuePair> = value_check::parse(&text(paths[2], value_check::VALUE_QUOTE_FRESH)?)
        .map_err(anyhow::Error::msg)?;
    let embedder = load_embedder(&config).await?;
    let model = embedder.model_id();
    type Scored = (LabelledScores, Vec<f32>, Vec<ValuePair>);
    let (scores, similarity, vq) = tokio::task::spawn_blocking(move || -> Result<Scored> {
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
        // Value/quote similarities of every pair. The threshold is chosen on
        // the choosing half, where a pair the contradiction rule decides
        // scores 0: the threshold is chosen on what the rule leaves.
        let input: Vec<(String, String)> = vq
            .iter()
            .map(|p| (p.value.clone(), p.quote.clone()))
            .collect();
        let similarity = relevance::score_pairs(embedder.as_ref(), &input)?;
        let value_quote = vq
            .iter()
            .zip(&similarity)
            .filter(|(p, _)| !p.reporting())
            .map(|(p, &s)| {
                let lexical = crate::rank::plan::contradiction(&p.value, &p.quote).is_some();
                (if lexical { 0.0 } else { s }, p.consistent)
            })
            .collect();
        let scores = LabelledScores {
            relevance: score(&rel, true)?,
            map: score(&map, false)?,
            value_quote,
        };
        Ok((scores, similarity, vq))
    })
    .await??;
    let chosen = relevance::choose(&scores);
    let out_of_sample = out_of_sample(&scores, &halves, &vq);
    // The value/quote check of a set of thresholds, on each half.
    let value_check = |t: &relevance::Thresholds| {
        let doubted: Vec<bool> = vq
            .iter()
            .zip(&similarity)
            .map(|(p, &s)| value_check::doubt(&p.value, &p.quote, Some(s), t).is_some())
            .collect();
        let half = |reporting: bool| {
            let (pairs, doubted): (Vec<ValuePair>, Vec<bool>) = vq
                .iter()
                .zip(&doubted)
                .filter(|(p, _)| p.reporting() == reporting)
                .map(|(p, &d)| (p.clone(), d))
                .unzip();
            value_check::report(&pairs, &doubted)
        };
        serde_json::json!({"choosing": half(false), "reporting": half(true)})
    };
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
        "out_of_sample": out_of_sample,
        "value_check": {
            "in_force": value_check::VALUE_CHECK,
            "compiled": value_check(&CALIBRATED),
            "chosen": value_check(&chosen),
            "pairs": vq.iter().zip(&similarity).map(|(p, s)| serde_json::json!({
                "value": p.value, "quote": p.quote, "kind": p.kind,
                "language": p.language, "reporting": p.reporting(), "similarity": s,
            })).collect::<Vec<_>>(),
        },
    });
    let mut out = std::io::stdout().lock();
    if !json {
        let o = &v["out_of_sample"];
        let t = &o["thresholds"];
        writeln!(
            out,
            "out of sample: chosen on the choosing half (fact >= {:.5}, reject < {:.5}, map >= {:.5}), on the reporting half:",
            t["fact"].as_f64().unwrap_or(0.0),
            t["reject"].as_f64().unwrap_or(0.0),
            t["map_short_circuit"].as_f64().unwrap_or(0.0)
        )?;
        for tier in ["fact", "reject", "map"] {
            let m = &o["reporting"][tier];
            writeln!(
                out,
                "  {tier:<6} precision {}/{} [{:.2}, {:.2}], recall {}/{}",
                m["precision"]["hits"],
                m["precision"]["n"],
                m["precision"]["wilson95"][0].as_f64().unwrap_or(0.0),
                m["precision"]["wilson95"][1].as_f64().unwrap_or(0.0),
                m["recall"]["hits"],
                m["recall"]["n"]
            )?;
        }
    }
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
        let r = &v["value_check"][label]["reporting"];
        for l in r["languages"].as_array().into_iter().flatten() {
            let share = |k: &str| {
                let s = &l[k];
                format!(
                    "{}/{} [{:.2}, {:.2}]",
                    s["hits"],
                    s["n"],
                    s["wilson95"][0].as_f64().unwrap_or(0.0),
                    s["wilson95"][1].as_f64().unwrap_or(0.0)
                )
            };
            writeln!(
                out,
                "  value check, reporting half, {}: honest kept {}, contradictions caught {}, unrelated caught {}",
                l["language"].as_str().unwrap_or(""),
                share("honest_kept"),
                share("contradictions_caught"),
                share("unrelated_caught")
            )?;
        }
        writeln!(
            out,
            "  value check supports {} (in force: {})",
            r["supports"], v["value_check"]["in_force"]
        )?;
    }
    Ok(())
}

fn min_max(it: impl Iterator<Item = f32>) -> [f32; 2] {
    it.fold([f32::MAX, f32::MIN], |[lo, hi], x| [lo.min(x), hi.max(x)])
}

/// Thresholds chosen on the choosing halves (`halves`: the relevance and
/// map pairs' reporting flags, `relevance::reporting_half`; the value/quote
/// pairs' own halves) and their decisions on the reporting halves, each
/// precision and recall with its Wilson interval.
fn out_of_sample(
    scores: &crate::relevance::LabelledScores,
    halves: &(Vec<bool>, Vec<bool>),
    vq: &[crate::rank::value_check::ValuePair],
) -> serde_json::Value {
    use crate::rank::value_check::Share;
    use crate::relevance::{self, LabelledScores};
    let pick = |v: &[(f32, bool)], flags: &[bool], reporting: bool| -> Vec<(f32, bool)> {
        v.iter()
            .zip(flags)
            .filter(|(_, f)| **f == reporting)
            .map(|(s, _)| *s)
            .collect()
    };
    let choosing = LabelledScores {
        relevance: pick(&scores.relevance, &halves.0, false),
        map: pick(&scores.map, &halves.1, false),
        value_quote: scores.value_quote.clone(),
    };
    let t = relevance::choose(&choosing);
    let reporting = |half: bool| {
        let scores = LabelledScores {
            relevance: pick(&scores.relevance, &halves.0, half),
            map: pick(&scores.map, &halves.1, half),
            value_quote: Vec::new(),
        };
        let m = relevance::evaluate(&t, &scores);
        let shares = |m: relevance::TierMetrics| {
            serde_json::json!({
                "precision": Share::new(m.hits, m.decided),
                "recall": Share::new(m.hits, m.wanted),
            })
        };
        serde_json::json!({
            "pairs": m.pairs,
            "map_pairs": m.map_pairs,
            "fact": shares(m.fact),
            "reject": shares(m.reject),
            "map": shares(m.map),
        })
    };
    serde_json::json!({
        "thresholds": t,
        "choosing": reporting(false),
        "reporting": reporting(true),
        "value_quote_reporting_pairs": vq.iter().filter(|p| p.reporting()).count(),
    })
}
