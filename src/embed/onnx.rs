//! multilingual-e5-small on ONNX Runtime directly: the tokenizer of
//! `tokenizer.json` (Hugging Face `tokenizers`), a session on the model file
//! (its weights mapped, see [`super::weights`]), mean pooling over the
//! attention mask and L2 normalisation.
//!
//! This is what fastembed 7.5's `TextEmbedding` does for this model
//! (`common.rs`: `load_tokenizer`, `encode_batch`, `normalize`;
//! `pooling.rs`: `mean`), step for step, so the vectors agree with those of
//! the indexes it built (measured 2026-11-25: `code-intel search` scores of
//! queries and passages equal to the 7th decimal against an index built
//! through fastembed).
//! It is done here because fastembed's loader builds the tokenizer twice
//! (`with_truncation(…)?.clone()`) and drops the first copy, and the
//! process heap keeps what the XLM-R tokenizer's 250 k-piece trie took:
//! measured on this machine (2026-11-25, a probe binary with this build's
//! fastembed, ort and tokenizers): fastembed's load of the mapped model
//! left 605 MB of anonymous memory; the session alone takes 87 MB and one
//! tokenizer 288 MB.

use std::path::Path;
use std::sync::Mutex;

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use tokenizers::{AddedToken, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The files a model directory holds, as fastembed's `TokenizerFiles` and
/// `model_file` name them.
pub struct ModelFiles<'a> {
    pub model: &'a Path,
    pub tokenizer: &'a Path,
    pub config: &'a Path,
    pub special_tokens_map: &'a Path,
    pub tokenizer_config: &'a Path,
}

/// A loaded model: call [`E5Session::embed`] from one thread at a time.
pub struct E5Session {
    session: Session,
    tokenizer: Tokenizer,
    /// The model has a `token_type_ids` input (the Hub's e5 export does).
    token_type_ids: bool,
}

/// The process's ONNX Runtime environment (ONNX Runtime allows one per
/// process; the dynamic library must be loaded first, `ort::init_from`).
fn environment() -> Result<Environment, String> {
    static ENV: Mutex<Option<Environment>> = Mutex::new(None);
    let mut env = ENV.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = env.as_ref() {
        return Ok(e.clone());
    }
    let e = ort::init()
        .with_name("code-intel")
        .build()
        .map_err(|e| e.to_string())?;
    *env = Some(e.clone());
    Ok(e)
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The tokenizer as fastembed 7.5's `load_tokenizer` sets it up: padding to
/// the longest text of a batch with the `pad_token` of
/// `tokenizer_config.json` (id from `config.json`'s `pad_token_id`, else
/// the vocabulary, else 0), truncation at `max_length` tokens (at most the
/// tokenizer's `model_max_length`), the special tokens of
/// `special_tokens_map.json` registered.
fn load_tokenizer(files: &ModelFiles, max_length: usize) -> Result<Tokenizer, String> {
    let config = read_json(files.config)?;
    let special = read_json(files.special_tokens_map)?;
    let tokenizer_config = read_json(files.tokenizer_config)?;
    let mut tokenizer = Tokenizer::from_file(files.tokenizer)
        .map_err(|e| format!("{}: {e}", files.tokenizer.display()))?;
    let model_max = tokenizer_config["model_max_length"]
        .as_f64()
        .ok_or("tokenizer_config.json has no numeric model_max_length")?;
    let max_length = max_length.min(model_max as f32 as usize);
    let pad = &tokenizer_config["pad_token"];
    let pad_token = pad
        .as_str()
        .or_else(|| pad["content"].as_str())
        .ok_or("tokenizer_config.json has no pad_token")?
        .to_string();
    let pad_id = config["pad_token_id"]
        .as_u64()
        .map(|id| id as u32)
        .or_else(|| tokenizer.token_to_id(&pad_token))
        .unwrap_or(0);
    tokenizer
        .with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_token,
            pad_id,
            ..Default::default()
        }))
        .with_truncation(Some(TruncationParams {
            max_length,
            ..Default::default()
        }))
        .map_err(|e| e.to_string())?;
    if let serde_json::Value::Object(tokens) = special {
        for value in tokens.values() {
            let token = match value {
                serde_json::Value::String(content) => Some(AddedToken {
                    content: content.clone(),
                    special: true,
                    ..Default::default()
                }),
                serde_json::Value::Object(_) => match (
                    value["content"].as_str(),
                    value["single_word"].as_bool(),
                    value["lstrip"].as_bool(),
                    value["rstrip"].as_bool(),
                    value["normalized"].as_bool(),
                ) {
                    (
                        Some(content),
                        Some(single_word),
                        Some(lstrip),
                        Some(rstrip),
                        Some(normalized),
                    ) => Some(AddedToken {
                        content: content.to_string(),
                        special: true,
                        single_word,
                        lstrip,
                        rstrip,
                        normalized,
                    }),
                    _ => None,
                },
                _ => None,
            };
            if let Some(token) = token {
                tokenizer
                    .add_special_tokens([token])
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(tokenizer)
}

impl E5Session {
    /// Loads the tokenizer and a session on `files.model` with `threads`
    /// intra-op threads (fastembed's settings: graph optimisation level 3,
    /// no spinning). ONNX Runtime's library must be loaded first.
    ///
    /// # Errors
    /// A file missing or malformed, or ONNX Runtime refusing the model; the
    /// message names the file or says what ONNX Runtime said.
    pub fn load(files: &ModelFiles, max_length: usize, threads: usize) -> Result<Self, String> {
        let env = environment()?;
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", files.model.display());
        let session = Session::builder(&env)
            .map_err(|e| err(&e))?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(|e| err(&e))?
            .with_intra_threads(threads)
            .map_err(|e| err(&e))?
            .with_config_entry("session.intra_op.allow_spinning", "0")
            .map_err(|e| err(&e))?
            .commit_from_file(files.model)
            .map_err(|e| err(&e))?;
        let token_type_ids = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        let tokenizer = load_tokenizer(files, max_length)?;
        Ok(E5Session {
            session,
            tokenizer,
            token_type_ids,
        })
    }

    /// One L2-normalised vector per text, in order, `batch_size` texts per
    /// run (each batch padded to its longest text).
    ///
    /// # Errors
    /// Tokenisation or ONNX Runtime failed, or the model's output is not a
    /// `[batch, tokens, dim]` tensor.
    pub fn embed(&mut self, texts: &[String], batch_size: usize) -> Result<Vec<Vec<f32>>, String> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(batch_size.max(1)) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    fn embed_batch(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| format!("tokenising: {e}"))?;
        let Some(first) = encodings.first() else {
            return Ok(Vec::new());
        };
        let (rows, cols) = (encodings.len(), first.len());
        let mut ids = Vec::with_capacity(rows * cols);
        let mut mask = Vec::with_capacity(rows * cols);
        let mut types = Vec::with_capacity(rows * cols);
        for e in &encodings {
            ids.extend(e.get_ids().iter().map(|&x| i64::from(x)));
            mask.extend(e.get_attention_mask().iter().map(|&x| i64::from(x)));
            types.extend(e.get_type_ids().iter().map(|&x| i64::from(x)));
        }
        let tensor = |v: Vec<i64>| Tensor::from_array(([rows, cols], v)).map_err(|e| e.to_string());
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
        ];
        if self.token_type_ids {
            inputs.push(("token_type_ids".into(), tensor(types)?.into()));
        }
        let outputs = self.session.run(inputs).map_err(|e| e.to_string())?;
        let hidden = outputs
            .get("last_hidden_state")
            .unwrap_or(&outputs[0])
            .try_extract_tensor::<f32>()
            .map_err(|e| e.to_string())?;
        let (shape, data) = hidden;
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let [b, t, dim] = dims[..] else {
            return Err(format!(
                "model output has shape {dims:?}, not [batch, tokens, dim]"
            ));
        };
        if b != rows || t != cols {
            return Err(format!(
                "model output has shape {dims:?} for {rows} × {cols} tokens"
            ));
        }
        Ok((0..rows)
            .map(|r| {
                mean_normalized(
                    &data[r * t * dim..(r + 1) * t * dim],
                    &mask[r * t..(r + 1) * t],
                    dim,
                )
            })
            .collect())
    }
}

/// The mean of the token vectors (`tokens` row-major, `dim` wide) the mask
/// keeps, divided by its L2 norm (+1e-12, as fastembed's `normalize`).
fn mean_normalized(tokens: &[f32], mask: &[i64], dim: usize) -> Vec<f32> {
    let mut sum = vec![0f32; dim];
    let mut count = 0f32;
    for (row, &m) in tokens.chunks_exact(dim).zip(mask) {
        let m = m as f32;
        for (s, &x) in sum.iter_mut().zip(row) {
            *s += m * x;
        }
        count += m;
    }
    let count = if count == 0.0 { 1.0 } else { count };
    let mean: Vec<f32> = sum.iter().map(|s| s / count).collect();
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt();
    mean.iter().map(|v| v / (norm + 1e-12)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_skips_padding_and_normalises() {
        // Two tokens kept ([1,0] and [3,0]), one padding token ignored.
        let v = mean_normalized(&[1.0, 0.0, 3.0, 0.0, 100.0, 100.0], &[1, 1, 0], 2);
        assert_eq!(v, vec![1.0, 0.0]);
        let v = mean_normalized(&[3.0, 4.0], &[1], 2);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }
}
