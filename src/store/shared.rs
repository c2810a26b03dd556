//! The team's shared vector store (`vector_store`): a LanceDB
//! database at any URI LanceDB opens (`s3://bucket/prefix`, `gs://…`,
//! `az://…`, a local directory) holding one table per vector width,
//! `vectors_<dim>`, of rows (model, content_hash, vector). A sync asks it
//! for the vectors it lacks before embedding and adds the ones it made; the
//! local `forest` stays what is searched.
//!
//! Writers on several machines add rows with a merge insert keyed on (model,
//! content_hash), the table's primary key, that inserts only unmatched
//! keys: Lance detects a concurrent commit that inserted the same keys and
//! retries against the new version, so two machines adding the same chunk
//! leave one row (tests/e2e/test_shared_store.py runs two).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchIterator, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::Table;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use super::{StoreError, compatible, lookup_vectors, sql_str, strings, vector_array, vector_field};

/// Rows per merge insert (one commit each): 8,192 × 384 floats ≈ 12.6 MB.
const ROWS_PER_COMMIT: usize = 8192;

/// An open shared store, scoped to one model id.
pub struct SharedVectors {
    table: Table,
    uri: String,
    model: String,
    dim: usize,
    /// Content hashes the store holds for `model` (read at open, grown by
    /// [`SharedVectors::put`]).
    known: HashSet<String>,
}

/// (model, content_hash) is the table's unenforced primary key (Lance
/// field metadata): with it, a merge insert on those columns carries a
/// filter of the keys it inserted, and Lance's conflict check retries it
/// when a concurrent commit inserted one of them. Without it, two machines
/// adding the same chunks at once both inserted them (257 distinct hashes
/// in 410 rows in the two-writer e2e test).
fn schema(dim: usize) -> SchemaRef {
    let key = |name: &str, position: &str| {
        Field::new(name, DataType::Utf8, false).with_metadata(
            [
                (
                    "lance-schema:unenforced-primary-key".to_string(),
                    "true".to_string(),
                ),
                (
                    "lance-schema:unenforced-primary-key:position".to_string(),
                    position.to_string(),
                ),
            ]
            .into_iter()
            .collect(),
        )
    };
    Arc::new(Schema::new(vec![
        key("model", "1"),
        key("content_hash", "2"),
        vector_field(dim),
    ]))
}

impl SharedVectors {
    /// Connects to `uri` with LanceDB `options` (credentials come from the
    /// environment: LanceDB reads `AWS_*`, `GOOGLE_*`, `AZURE_*`), creates
    /// the table for `dim` when missing, and reads which hashes it holds
    /// for `model`.
    ///
    /// # Errors
    /// [`StoreError::Shared`] naming the URI: unreachable, no credentials,
    /// a scheme this build lacks, or a table of another layout.
    pub async fn open(
        uri: &str,
        options: &BTreeMap<String, String>,
        model: &str,
        dim: usize,
    ) -> Result<SharedVectors, StoreError> {
        let err = |message: String| StoreError::Shared {
            uri: uri.to_string(),
            message: concise(&message),
        };
        if !uri.contains("://") {
            std::fs::create_dir_all(uri).map_err(|e| err(e.to_string()))?;
        }
        let db = lancedb::connect(uri)
            .storage_options(options.iter().map(|(k, v)| (k.clone(), v.clone())))
            .read_consistency_interval(std::time::Duration::ZERO)
            .execute()
            .await
            .map_err(|e| StoreError::Shared {
                uri: uri.to_string(),
                message: scheme_hint(uri, concise(&e.to_string())),
            })?;
        let name = format!("vectors_{dim}");
        let names = db
            .table_names()
            .execute()
            .await
            .map_err(|e| err(e.to_string()))?;
        let table = if names.contains(&name) {
            db.open_table(&name).execute().await
        } else {
            match db.create_empty_table(&name, schema(dim)).execute().await {
                // Another machine created it meanwhile.
                Err(lancedb::Error::TableAlreadyExists { .. }) => {
                    db.open_table(&name).execute().await
                }
                other => other,
            }
        }
        .map_err(|e| err(e.to_string()))?;
        let found = table.schema().await.map_err(|e| err(e.to_string()))?;
        if !compatible(found.as_ref(), &schema(dim)) {
            return Err(err(format!(
                "table `{name}` has columns {:?}, not (model, content_hash, vector): it was not written by code-intel; use another prefix",
                found.fields().iter().map(|f| f.name()).collect::<Vec<_>>()
            )));
        }
        let batches: Vec<RecordBatch> = table
            .query()
            .only_if(format!("model = {}", sql_str(model)))
            .select(Select::Columns(vec!["content_hash".into()]))
            .execute()
            .await
            .map_err(|e| err(e.to_string()))?
            .try_collect()
            .await
            .map_err(|e| err(e.to_string()))?;
        let known = strings(&batches, "content_hash")?.into_iter().collect();
        Ok(SharedVectors {
            table,
            uri: uri.to_string(),
            model: model.to_string(),
            dim,
            known,
        })
    }

    /// Hashes held for this model.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// True when the store holds a vector of this model for `hash`.
    pub fn contains(&self, hash: &str) -> bool {
        self.known.contains(hash)
    }

    /// The vectors the store holds for these hashes (others are absent).
    ///
    /// # Errors
    /// [`StoreError::Shared`] when the store cannot be read.
    pub async fn lookup(&self, hashes: &[String]) -> Result<HashMap<String, Vec<f32>>, StoreError> {
        let wanted: Vec<&String> = hashes.iter().filter(|h| self.known.contains(*h)).collect();
        let mut out = HashMap::new();
        if wanted.is_empty() {
            return Ok(out);
        }
        let filter = format!("model = {}", sql_str(&self.model));
        lookup_vectors(&self.table, Some(&filter), &wanted, &mut out)
            .await
            .map_err(|e| self.error(e))?;
        Ok(out)
    }

    /// Adds the rows whose hash the store lacks, in commits of
    /// [`ROWS_PER_COMMIT`]; returns how many it sent (a concurrent writer
    /// may have added some of them first: those are not duplicated).
    ///
    /// # Errors
    /// [`StoreError::Shared`]; rows of commits before the failing one stay.
    pub async fn put(&mut self, rows: &[(String, Vec<f32>)]) -> Result<usize, StoreError> {
        let mut seen = HashSet::new();
        let new: Vec<&(String, Vec<f32>)> = rows
            .iter()
            .filter(|(h, v)| v.len() == self.dim && !self.known.contains(h) && seen.insert(h))
            .collect();
        let schema = schema(self.dim);
        for part in new.chunks(ROWS_PER_COMMIT) {
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(StringArray::from_iter_values(
                        part.iter().map(|_| self.model.as_str()),
                    )),
                    Arc::new(StringArray::from_iter_values(
                        part.iter().map(|(h, _)| h.as_str()),
                    )),
                    Arc::new(vector_array(
                        part.iter().flat_map(|(_, v)| v.iter().copied()).collect(),
                        self.dim,
                    )?),
                ],
            )
            .map_err(|e| StoreError::Data(e.to_string()))?;
            let reader = RecordBatchIterator::new(vec![Ok(batch)], schema.clone());
            let mut merge = self.table.merge_insert(&["model", "content_hash"]);
            merge.when_not_matched_insert_all();
            merge
                .execute(Box::new(reader))
                .await
                .map_err(|e| self.error(StoreError::Lance(e)))?;
            self.known.extend(part.iter().map(|(h, _)| h.clone()));
        }
        Ok(new.len())
    }

    /// Rows of every model in the store.
    ///
    /// # Errors
    /// [`StoreError::Shared`].
    pub async fn rows(&self) -> Result<usize, StoreError> {
        self.table
            .count_rows(None)
            .await
            .map_err(|e| self.error(StoreError::Lance(e)))
    }

    fn error(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::Shared { .. } => e,
            other => StoreError::Shared {
                uri: self.uri.clone(),
                message: concise(&other.to_string()),
            },
        }
    }
}

/// LanceDB's object-store errors print nested `Debug` structures (a
/// connection refused is ~1,000 chars); keeps the head and the quoted
/// causes: `Failed to connect to namespace: IO: tcp connect error;
/// Connection refused`. The full text goes to the debug log.
fn concise(message: &str) -> String {
    // Lance appends the source location of the error: `, /…/object_store.rs:1576:42`.
    let message = match message.rfind(", /") {
        Some(at) if message[at..].contains(".rs:") => &message[..at],
        _ => message,
    };
    if !message.contains(" { ") {
        return message.to_string();
    }
    tracing::debug!("shared vector store error: {message}");
    let head = message.split(" { ").next().unwrap_or(message).trim();
    let mut causes: Vec<&str> = Vec::new();
    for marker in [
        "ConnectError(\"",
        "message: \"",
        "Client error with status ",
        "status: ",
    ] {
        let mut rest = message;
        while let Some(at) = rest.find(marker) {
            rest = &rest[at + marker.len()..];
            let end = rest.find(['"', ',', ')', '}']).unwrap_or(rest.len());
            let cause = rest[..end].trim();
            if !cause.is_empty() && !causes.contains(&cause) {
                causes.push(cause);
            }
        }
    }
    if causes.is_empty() {
        return message.chars().take(400).collect();
    }
    format!("{head}: {}", causes.join("; "))
}

/// Adds what to do when LanceDB does not know a scheme (a build without
/// that object store's cargo feature).
fn scheme_hint(uri: &str, message: String) -> String {
    let feature = match uri.split("://").next() {
        Some("s3" | "s3+ddb") => "s3",
        Some("gs") => "gcs",
        Some("az" | "abfs") => "azure",
        _ => return message,
    };
    if cfg!(feature = "s3") && feature == "s3"
        || cfg!(feature = "gcs") && feature == "gcs"
        || cfg!(feature = "azure") && feature == "azure"
    {
        return message;
    }
    format!(
        "{message} (this build has no {feature} support: install a prebuilt release or build with `cargo install code-intel --features {feature}`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_store_errors_are_cut_to_their_causes() {
        // Seen with the S3 server killed (tests/e2e/test_shared_store.py).
        let seen = r#"Invalid input, Failed to connect to namespace: IO { source: Generic { store: "S3", source: ListRequest { source: RetryError(RetryErrorImpl { method: GET, uri: Some(http://127.0.0.1:57709/team-vectors?list-type=2), retries: 3, max_retries: 3, elapsed: 451.527229ms, retry_timeout: 180s, inner: Http(HttpError { kind: Connect, source: reqwest::Error { kind: Request, source: hyper_util::client::legacy::Error(Connect, ConnectError("tcp connect error", 127.0.0.1:57709, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })) } }) }) } }, location: Location { file: "x.rs", line: 1, column: 42 }, backtrace: MaybeBacktrace }"#;
        assert_eq!(
            concise(seen),
            "Invalid input, Failed to connect to namespace: IO: tcp connect error; Connection refused"
        );
        assert_eq!(concise("table not found"), "table not found");
        let listed = "lance error: LanceError(IO): Generic S3 error: Error performing list request: Error performing GET http://127.0.0.1:41855/b in 425ms, after 3 retries - HTTP error: error sending request, /root/.cargo/registry/src/lance-io-14.0.2/src/object_store.rs:1576:42";
        assert!(concise(listed).ends_with("HTTP error: error sending request"));
    }
}
