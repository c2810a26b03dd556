//! A deterministic embedder for unit tests of ranking, gating and sync
//! logic; the end-to-end tests run the real model.

use super::{EmbedError, Embedder};

/// A deterministic embedder: each word adds 1 to one of 384 dimensions.
pub(crate) struct HashedWords;

impl HashedWords {
    pub(crate) fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; crate::embed::E5_DIM];
        for w in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = crate::util::sha256_hex(w.to_lowercase().as_bytes());
            let i = usize::from_str_radix(&h[..4], 16).unwrap_or(0) % v.len();
            v[i] += 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.iter().map(|x| x / norm).collect()
    }
}

impl Embedder for HashedWords {
    fn dim(&self) -> usize {
        crate::embed::E5_DIM
    }
    fn model_id(&self) -> String {
        "hashed-words".into()
    }
    fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
    fn embed_queries(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
}
