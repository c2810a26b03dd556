//! A remote OpenAI-compatible embeddings API as an [`Embedder`]
//! (`embedding_endpoint`): `POST …/v1/embeddings` with
//! `{"model", "input": [..], "encoding_format": "float"}`, answered with
//! `{"data": [{"index", "embedding"}], "model"}`. We add the E5 prefixes and
//! L2-normalise, so any server of the same weights (text-embeddings-inference,
//! Ollama, vLLM, infinity) gives the vectors the local model gives.

use std::time::Duration;

use super::{E5_DIM, EmbedError, Embedder, PASSAGE_PREFIX, QUERY_PREFIX};
use crate::config::EndpointConfig;

/// First backoff delay; doubled per retry, capped at [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Longest `Retry-After` we honour; longer ones are cut to this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// The remote embedder. Blocking (ureq): call it off the async runtime,
/// as the local one.
pub struct EndpointEmbedder {
    agent: ureq::Agent,
    url: String,
    model: String,
    batch_size: usize,
    retries: u32,
    api_key: Option<String>,
}

/// `…/embeddings` as given; `…/v1` + `/embeddings`; any other base +
/// `/v1/embeddings`.
pub fn embeddings_url(url: &str) -> String {
    let base = url.trim_end_matches('/');
    if base.ends_with("/embeddings") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/embeddings")
    } else {
        format!("{base}/v1/embeddings")
    }
}

impl EndpointEmbedder {
    /// Builds the client; sends nothing.
    ///
    /// # Errors
    /// [`EmbedError::Endpoint`] when `api_key_env` names an unset variable.
    pub fn new(config: &EndpointConfig) -> Result<EndpointEmbedder, EmbedError> {
        let url = embeddings_url(&config.url);
        let api_key = match &config.api_key_env {
            Some(var) => Some(
                std::env::var(var)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| EmbedError::Endpoint {
                        url: url.clone(),
                        message: format!(
                            "embedding_endpoint.api_key_env names {var}, which is not set in the environment; export {var}=<API key>"
                        ),
                    })?,
            ),
            None => None,
        };
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(config.timeout_seconds)))
            .http_status_as_error(false)
            .tls_config(crate::http::tls_config())
            .build()
            .new_agent();
        Ok(EndpointEmbedder {
            agent,
            url,
            model: config.model.clone(),
            batch_size: config.batch_size,
            retries: config.retries,
            api_key,
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn error(&self, message: String) -> EmbedError {
        EmbedError::Endpoint {
            url: self.url.clone(),
            message,
        }
    }

    /// One batch, with retries. Returns unit vectors in input order.
    fn request(&self, input: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({
            "model": self.model,
            "input": input,
            "encoding_format": "float",
        });
        let mut attempt = 0u32;
        loop {
            let (message, retry_after) = match self.send(&body) {
                Ok(value) => return self.parse(value, input.len()),
                Err(Failure::Final(message)) => return Err(self.error(message)),
                Err(Failure::Retry(message, after)) => (message, after),
            };
            if attempt >= self.retries {
                return Err(self.error(format!(
                    "{message} (gave up after {} attempts; raise embedding_endpoint.retries or timeout_seconds, or check the server)",
                    attempt + 1
                )));
            }
            let backoff = FIRST_BACKOFF
                .saturating_mul(1 << attempt.min(8))
                .min(MAX_BACKOFF);
            let wait = retry_after.map_or(backoff, |a| a.min(MAX_RETRY_AFTER));
            tracing::warn!(
                "embedding endpoint {}: {message}; retrying in {:.1} s",
                self.url,
                wait.as_secs_f64()
            );
            std::thread::sleep(wait);
            attempt += 1;
        }
    }

    /// Sends once. Timeouts, connection errors, 429 and 5xx are
    /// [`Failure::Retry`]; other 4xx answers are final.
    fn send(&self, body: &serde_json::Value) -> Result<serde_json::Value, Failure> {
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(body)
            .map_err(|e| Failure::Retry(transport_message(&e), None))?;
        let status = response.status().as_u16();
        if status == 200 {
            return response
                .body_mut()
                .read_json::<serde_json::Value>()
                .map_err(|e| Failure::Retry(format!("unreadable answer: {e}"), None));
        }
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        let text = response
            .body_mut()
            .read_to_string()
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect::<String>();
        let message = format!("HTTP {status}: {}", text.trim());
        Err(match status {
            429 | 500..=599 => Failure::Retry(message, retry_after),
            401 | 403 => Failure::Final(format!(
                "{message}; check the API key (embedding_endpoint.api_key_env)"
            )),
            _ => Failure::Final(message),
        })
    }

    /// Checks and normalises an answer: one vector per input, each of
    /// [`E5_DIM`] finite values, and the model we asked for.
    fn parse(&self, value: serde_json::Value, n: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(model) = value.get("model").and_then(|m| m.as_str())
            && model != self.model
        {
            return Err(self.error(format!(
                "the endpoint answered with model `{model}`, not `{}`: vectors of two models cannot share an index; point embedding_endpoint.url at a server of `{}`, or set embedding_endpoint.model to `{model}` and re-index with `code-intel index --force`",
                self.model, self.model
            )));
        }
        let data = value
            .get("data")
            .and_then(|d| d.as_array())
            .ok_or_else(|| self.error("the answer has no `data` array".into()))?;
        if data.len() != n {
            return Err(self.error(format!("{} vectors for {n} inputs", data.len())));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
        for (pos, item) in data.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(|i| i.as_u64())
                .map_or(pos, |i| i as usize);
            let values = item
                .get("embedding")
                .and_then(|e| e.as_array())
                .ok_or_else(|| {
                    self.error("an item has no `embedding` array (encoding_format float)".into())
                })?;
            if values.len() != E5_DIM {
                return Err(self.error(format!(
                    "the endpoint returned {}-dimensional vectors; multilingual-e5-small has {E5_DIM}: it serves another model",
                    values.len()
                )));
            }
            let mut v: Vec<f32> = values
                .iter()
                .map(|x| x.as_f64().map(|f| f as f32))
                .collect::<Option<Vec<f32>>>()
                .filter(|v| v.iter().all(|x| x.is_finite()))
                .ok_or_else(|| self.error("a vector holds a non-number".into()))?;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm == 0.0 {
                return Err(self.error("the endpoint returned a zero vector".into()));
            }
            v.iter_mut().for_each(|x| *x /= norm);
            match out.get_mut(index) {
                Some(slot @ None) => *slot = Some(v),
                _ => return Err(self.error(format!("bad or repeated index {index}"))),
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn embed_prefixed(&self, prefix: &str, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            let input: Vec<String> = batch.iter().map(|t| format!("{prefix}{t}")).collect();
            out.extend(self.request(&input)?);
        }
        Ok(out)
    }
}

enum Failure {
    Retry(String, Option<Duration>),
    Final(String),
}

fn transport_message(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        other => other.to_string(),
    }
}

impl Embedder for EndpointEmbedder {
    fn dim(&self) -> usize {
        E5_DIM
    }

    fn model_id(&self) -> String {
        self.model.clone()
    }

    fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_prefixed(PASSAGE_PREFIX, texts)
    }

    fn embed_queries(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_prefixed(QUERY_PREFIX, texts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_forms() {
        assert_eq!(
            embeddings_url("http://h:8080"),
            "http://h:8080/v1/embeddings"
        );
        assert_eq!(embeddings_url("http://h/v1/"), "http://h/v1/embeddings");
        assert_eq!(
            embeddings_url("https://h/api/embeddings"),
            "https://h/api/embeddings"
        );
    }

    fn embedder() -> EndpointEmbedder {
        EndpointEmbedder::new(&EndpointConfig {
            url: "http://127.0.0.1:9".into(),
            ..EndpointConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn answers_are_checked_and_normalised() {
        let e = embedder();
        let mut v = vec![0.0f64; E5_DIM];
        v[0] = 3.0;
        v[1] = 4.0;
        let answer = serde_json::json!({
            "model": "intfloat/multilingual-e5-small",
            "data": [{"index": 1, "embedding": v}, {"index": 0, "embedding": vec![1.0; E5_DIM]}],
        });
        let out = e.parse(answer, 2).unwrap();
        assert!((out[1][0] - 0.6).abs() < 1e-6 && (out[1][1] - 0.8).abs() < 1e-6);
        assert!((out[0][0] - 1.0 / (E5_DIM as f32).sqrt()).abs() < 1e-6);

        let other = serde_json::json!({"model": "bge-m3", "data": [{"embedding": v}]});
        let err = e.parse(other, 1).unwrap_err().to_string();
        assert!(err.contains("bge-m3") && err.contains("--force"), "{err}");
        let short = serde_json::json!({"data": [{"embedding": [1.0, 2.0]}]});
        let err = e.parse(short, 1).unwrap_err().to_string();
        assert!(err.contains("2-dimensional"), "{err}");
        let missing = serde_json::json!({"data": []});
        assert!(e.parse(missing, 1).is_err());
    }

    #[test]
    fn unset_api_key_variable_is_named() {
        let err = EndpointEmbedder::new(&EndpointConfig {
            url: "http://127.0.0.1:9".into(),
            api_key_env: Some("CODE_INTEL_TEST_UNSET_KEY_VAR".into()),
            ..EndpointConfig::default()
        })
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("CODE_INTEL_TEST_UNSET_KEY_VAR"), "{err}");
    }
}
