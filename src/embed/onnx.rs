//! multilingual-e5-small on ONNX Runtime directly: the tokenizer of
//! `tokenizer.json` (Hugging Face `tokenizers`, its Unigram vocabulary held
//! as a [`CompactUnigram`]), a session on the model file
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
use tokenizers::{
    AddedToken, DecoderWrapper, Model, ModelWrapper, NormalizerWrapper, PaddingParams,
    PaddingStrategy, PostProcessorWrapper, PreTokenizerWrapper, Token, TokenizerBuilder,
    TokenizerImpl, TruncationParams,
};

use super::unigram::{CompactUnigram, UnigramJson};
use super::weights::{DETACHED_KEY, DetachedGather};

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
    tokenizer: E5Tokenizer,
    /// The model has a `token_type_ids` input (the Hub's e5 export does).
    token_type_ids: bool,
    /// The word-embedding rows the model leaves to its caller
    /// ([`super::weights::DetachedGather`]), when it does.
    rows: Option<RowSource>,
}

/// The rows of a detached table, read from its data file with positional
/// reads: the pages stay the kernel's page cache instead of this process's
/// mapped (resident) memory.
struct RowSource {
    gather: DetachedGather,
    file: std::fs::File,
    /// Bytes of one row.
    row_bytes: usize,
}

impl RowSource {
    /// The model's [`DETACHED_KEY`] entry, its data file opened (a path
    /// relative to `model`'s directory); `None` when the model has no such
    /// entry.
    ///
    /// # Errors
    /// The entry is not a [`DetachedGather`], or the data file is missing or
    /// shorter than the table it describes.
    fn open(model: &Path, session: &Session) -> Result<Option<RowSource>, String> {
        let Some(json) = session.metadata().ok().and_then(|m| m.custom(DETACHED_KEY)) else {
            return Ok(None);
        };
        let err = |e: &dyn std::fmt::Display| format!("{}: {DETACHED_KEY}: {e}", model.display());
        let gather: DetachedGather = serde_json::from_str(&json).map_err(|e| err(&e))?;
        let size = match gather.elem_type {
            1 => 4,
            2 | 3 => 1,
            t => {
                return Err(err(&format!(
                    "element type {t} is not float, uint8 or int8"
                )));
            }
        };
        let row_bytes = gather.cols as usize * size;
        let path = model
            .parent()
            .unwrap_or(Path::new("."))
            .join(&gather.location);
        let file =
            std::fs::File::open(&path).map_err(|e| err(&format!("{}: {e}", path.display())))?;
        let len = file.metadata().map_err(|e| err(&e))?.len();
        if len < gather.offset + gather.rows * row_bytes as u64 {
            return Err(err(&format!(
                "{} holds {len} bytes, the table ends at {}",
                path.display(),
                gather.offset + gather.rows * row_bytes as u64
            )));
        }
        Ok(Some(RowSource {
            gather,
            file,
            row_bytes,
        }))
    }

    /// The table's rows for `ids` (`[rows, cols]` token ids, row-major) as
    /// the `[rows, cols, dim]` input the model expects; each distinct id is
    /// read once.
    ///
    /// # Errors
    /// An id outside the table, or the read failed.
    fn input(
        &self,
        ids: &[i64],
        rows: usize,
        cols: usize,
    ) -> Result<ort::session::SessionInputValue<'static>, String> {
        let rb = self.row_bytes;
        let mut bytes = vec![0u8; ids.len() * rb];
        let mut seen: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
        for (k, &id) in ids.iter().enumerate() {
            let at = k * rb;
            if let Some(&first) = seen.get(&id) {
                bytes.copy_within(first..first + rb, at);
                continue;
            }
            let row = u64::try_from(id)
                .ok()
                .filter(|&r| r < self.gather.rows)
                .ok_or_else(|| {
                    format!(
                        "token id {id} outside the model's {} rows",
                        self.gather.rows
                    )
                })?;
            read_exact_at(
                &self.file,
                &mut bytes[at..at + rb],
                self.gather.offset + row * rb as u64,
            )
            .map_err(|e| format!("reading the word-embedding rows: {e}"))?;
            seen.insert(id, at);
        }
        let shape = [rows, cols, self.gather.cols as usize];
        let value = match self.gather.elem_type {
            1 => {
                let floats: Vec<f32> = bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                Tensor::from_array((shape, floats)).map(Into::into)
            }
            2 => Tensor::from_array((shape, bytes)).map(Into::into),
            _ => {
                let signed: Vec<i8> = bytes.into_iter().map(|b| b as i8).collect();
                Tensor::from_array((shape, signed)).map(Into::into)
            }
        };
        value.map_err(|e| e.to_string())
    }
}

#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
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

/// The tokenizer: `tokenizer.json`'s pipeline around its model.
type E5Tokenizer = TokenizerImpl<
    VocabModel,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// The tokenizer's model: a Unigram vocabulary (e5's, XLM-R's) in the
/// compact form of [`CompactUnigram`], any other kind as the `tokenizers`
/// crate loads it.
enum VocabModel {
    Unigram(CompactUnigram),
    Other(ModelWrapper),
}

impl Model for VocabModel {
    type Trainer = tokenizers::models::TrainerWrapper;
    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        match self {
            VocabModel::Unigram(m) => m.tokenize(sequence),
            VocabModel::Other(m) => m.tokenize(sequence),
        }
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            VocabModel::Unigram(m) => m.token_to_id(token),
            VocabModel::Other(m) => m.token_to_id(token),
        }
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        match self {
            VocabModel::Unigram(m) => m.id_to_token(id),
            VocabModel::Other(m) => m.id_to_token(id),
        }
    }
    fn get_vocab(&self) -> std::collections::HashMap<String, u32> {
        match self {
            VocabModel::Unigram(m) => m.get_vocab(),
            VocabModel::Other(m) => m.get_vocab(),
        }
    }
    fn get_vocab_size(&self) -> usize {
        match self {
            VocabModel::Unigram(m) => m.get_vocab_size(),
            VocabModel::Other(m) => m.get_vocab_size(),
        }
    }
    fn save(
        &self,
        folder: &Path,
        prefix: Option<&str>,
    ) -> tokenizers::Result<Vec<std::path::PathBuf>> {
        match self {
            VocabModel::Unigram(m) => m.save(folder, prefix),
            VocabModel::Other(m) => m.save(folder, prefix),
        }
    }
    fn get_trainer(&self) -> Self::Trainer {
        match self {
            VocabModel::Unigram(m) => m.get_trainer(),
            VocabModel::Other(m) => m.get_trainer(),
        }
    }
}

/// The parts of `tokenizer.json` the pipeline is built from (what the
/// crate's `Tokenizer` deserializer reads; `truncation` and `padding` are
/// left out because [`load_tokenizer`] sets both).
#[derive(serde::Deserialize)]
struct TokenizerJson<M> {
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
    model: M,
}

/// Reads `tokenizer.json` as the crate's `Tokenizer::from_file` does, with
/// a Unigram model built as a [`CompactUnigram`] (its vocabulary is never
/// built as the crate's trie, not even for a moment: the heap would keep
/// it).
///
/// # Errors
/// The file is unreadable or not a tokenizer the crate can read; the
/// message names the file.
fn read_tokenizer(path: &Path) -> Result<E5Tokenizer, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let bytes = std::fs::read(path).map_err(|e| err(&e))?;
    let (json, model) = match serde_json::from_slice::<TokenizerJson<UnigramJson>>(&bytes) {
        Ok(json) if json.model.kind == "Unigram" => {
            let (json, vocab) = json.take_model();
            let model = CompactUnigram::new(vocab).map_err(|e| err(&e))?;
            (json, VocabModel::Unigram(model))
        }
        _ => {
            let json = serde_json::from_slice::<TokenizerJson<ModelWrapper>>(&bytes)
                .map_err(|e| err(&e))?;
            let (json, model) = json.take_model();
            (json, VocabModel::Other(model))
        }
    };
    let mut tokenizer = TokenizerBuilder::new()
        .with_model(model)
        .with_normalizer(json.normalizer)
        .with_pre_tokenizer(json.pre_tokenizer)
        .with_post_processor(json.post_processor)
        .with_decoder(json.decoder)
        .build()
        .map_err(|e| err(&e))?;
    tokenizer
        .add_tokens(json.added_tokens)
        .map_err(|e| err(&e))?;
    Ok(tokenizer)
}

impl<M> TokenizerJson<M> {
    fn take_model(self) -> (TokenizerJson<()>, M) {
        let TokenizerJson {
            added_tokens,
            normalizer,
            pre_tokenizer,
            post_processor,
            decoder,
            model,
        } = self;
        (
            TokenizerJson {
                added_tokens,
                normalizer,
                pre_tokenizer,
                post_processor,
                decoder,
                model: (),
            },
            model,
        )
    }
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
fn load_tokenizer(files: &ModelFiles, max_length: usize) -> Result<E5Tokenizer, String> {
    let config = read_json(files.config)?;
    let special = read_json(files.special_tokens_map)?;
    let tokenizer_config = read_json(files.tokenizer_config)?;
    let mut tokenizer = read_tokenizer(files.tokenizer)?;
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
        let rows = RowSource::open(files.model, &session)?;
        let tokenizer = load_tokenizer(files, max_length)?;
        Ok(E5Session {
            session,
            tokenizer,
            token_type_ids,
            rows,
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
        let word_rows = match &self.rows {
            Some(source) => Some((source.gather.input.clone(), source.input(&ids, rows, cols)?)),
            None => None,
        };
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
        ];
        if let Some((name, value)) = word_rows {
            inputs.push((name.into(), value));
        }
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
    use std::path::PathBuf;

    /// The e5 model directory the test command provides (`scripts/setup.sh`
    /// exports `CODE_INTEL_ASSETS`, `../shared/tools/test-models/build.sh`
    /// builds it).
    fn e5_dir() -> Option<PathBuf> {
        std::env::var_os("CODE_INTEL_MODEL_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("CODE_INTEL_ASSETS")
                    .map(|a| PathBuf::from(a).join("models/multilingual-e5-small"))
            })
    }

    fn e5_tokenizer() -> Option<PathBuf> {
        Some(e5_dir()?.join("tokenizer.json"))
    }

    /// For a test whose assets (`what`) are absent: a failure where they
    /// must be there (`CODE_INTEL_REQUIRE_ASSETS`, which `scripts/setup.sh`
    /// exports when it builds them from `../shared`, as in CI), else a note
    /// on stderr and the test ends (a plain `cargo test` has none).
    fn without_assets(what: &str) {
        assert!(
            std::env::var_os("CODE_INTEL_REQUIRE_ASSETS").is_none(),
            "{what} not set although CODE_INTEL_REQUIRE_ASSETS is: the test models were not built"
        );
        eprintln!("{what} not set: run through scripts/test.sh");
    }

    /// The mapped copy, whose word-embedding rows this code reads and feeds
    /// in (`weights::DetachedGather`), gives the vectors of the model as
    /// published (ONNX Runtime's own `Gather`), on English, Japanese and code,
    /// in one padded batch with a text past the 512-token truncation.
    #[test]
    fn detached_word_rows_give_the_vectors_of_the_published_model() {
        let (Some(dir), Some(_)) = (e5_dir(), std::env::var_os("ORT_DYLIB_PATH")) else {
            return without_assets("CODE_INTEL_ASSETS / ORT_DYLIB_PATH");
        };
        let tmp = tempfile::tempdir().unwrap();
        let mapped = super::super::weights::mapped_model(&dir.join("model.onnx"), tmp.path())
            .unwrap()
            .expect("e5's weights are inline: a mapped copy is made");
        let files = |model: &Path| -> Result<E5Session, String> {
            let f = ModelFiles {
                model,
                tokenizer: &dir.join("tokenizer.json"),
                config: &dir.join("config.json"),
                special_tokens_map: &dir.join("special_tokens_map.json"),
                tokenizer_config: &dir.join("tokenizer_config.json"),
            };
            E5Session::load(&f, 512, 1)
        };
        let texts: Vec<String> = [
            "passage: public function destroy(Playlist $playlist) { $this->authorize('own', $playlist); }",
            "query: お気に入りの曲を削除する",
            "passage: プレイリストのフォルダ名は255文字まで",
            "query: limit the folder name",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(std::iter::once("passage: ".to_string() + &"fn f() { g(); } // 説明 ".repeat(200)))
        .collect();
        let mut published = files(&dir.join("model.onnx")).unwrap();
        assert!(published.rows.is_none());
        let want = published.embed(&texts, 8).unwrap();
        drop(published);
        let mut detached = files(&mapped).unwrap();
        assert!(
            detached.rows.is_some(),
            "the mapped copy detaches the table"
        );
        let got = detached.embed(&texts, 8).unwrap();
        assert_eq!(got.len(), texts.len());
        for (g, w) in got.iter().zip(&want) {
            let diff = g
                .iter()
                .zip(w)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-5, "max |Δ| {diff}");
        }
    }

    /// Every text file under `dir` (recursively), read whole.
    fn texts_under(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            if path.is_dir() {
                texts_under(&path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push(text);
            }
        }
    }

    /// [`read_tokenizer`] (the vocabulary as a [`CompactUnigram`]) gives the
    /// ids, tokens and offsets of the crate's own `Tokenizer::from_file`
    /// (its `Unigram`) on every file of this repository's `src/` and
    /// `tests/` (English, Japanese, code), on texts made to hit unknown
    /// characters, fused unknowns and special tokens, and on the files under
    /// the directories of `CODE_INTEL_TOKENIZER_CORPUS` (`:`-separated; how
    /// the wider check of the closing note was run).
    #[test]
    fn same_tokens_as_the_crate() {
        let Some(path) = e5_tokenizer() else {
            return without_assets("CODE_INTEL_ASSETS / CODE_INTEL_MODEL_DIR");
        };
        assert!(path.is_file(), "{} missing", path.display());
        let crate_tokenizer = tokenizers::Tokenizer::from_file(&path).unwrap();
        let ours = read_tokenizer(&path).unwrap();
        assert!(matches!(ours.get_model(), VocabModel::Unigram(_)));
        assert_eq!(
            ours.get_vocab_size(true),
            crate_tokenizer.get_vocab_size(true)
        );

        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts: Vec<String> = [
            "",
            " ",
            "ログイン時にパスワードを検証する",
            "プレイリストを削除する play a song",
            // Characters with no piece of their own: unknown, fused.
            "\u{10FFFF}\u{10FFFE} x \u{E000}\u{E001}\u{E002}y",
            "<unk> <s> </s> <pad> <mask> a<mask>b",
            "\u{1F600}\u{1F9D1}\u{200D}\u{1F4BB} ☃ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \t\r\n\u{0}\u{7}",
            "Ａｐｐ\\Ｈｔｔｐ ｶﾀｶﾅ ①②③ ﬁ",
        ]
        .map(String::from)
        .to_vec();
        texts_under(&root.join("src"), &mut texts);
        texts_under(&root.join("tests"), &mut texts);
        for dir in std::env::var("CODE_INTEL_TOKENIZER_CORPUS")
            .unwrap_or_default()
            .split(':')
        {
            if !dir.is_empty() {
                texts_under(Path::new(dir), &mut texts);
            }
        }
        // The made-up texts do reach the unknown-character path.
        let unk = crate_tokenizer.token_to_id("<unk>").unwrap();
        assert!(
            crate_tokenizer
                .encode(texts[4].as_str(), true)
                .unwrap()
                .get_ids()
                .contains(&unk)
        );
        assert!(texts.len() > 100, "only {} texts", texts.len());
        let mut tokens = 0;
        for text in &texts {
            let a = crate_tokenizer.encode(text.as_str(), true).unwrap();
            let b = ours.encode(text.as_str(), true).unwrap();
            assert_eq!(
                a.get_ids(),
                b.get_ids(),
                "ids differ on {:?}",
                &text[..text.len().min(200)]
            );
            assert_eq!(a.get_tokens(), b.get_tokens());
            assert_eq!(a.get_offsets(), b.get_offsets());
            assert_eq!(a.get_special_tokens_mask(), b.get_special_tokens_mask());
            tokens += a.len();
        }
        eprintln!("{} texts, {tokens} tokens: the same", texts.len());
    }

    /// A tokenizer whose model is not Unigram (a word-level one here) is
    /// loaded by the crate as before, and tokenizes as the crate does.
    #[test]
    fn other_models_load_as_the_crate_loads_them() {
        use tokenizers::models::wordlevel::WordLevel;
        use tokenizers::pre_tokenizers::whitespace::Whitespace;
        let vocab = [("[UNK]", 0), ("play", 1), ("a", 2), ("song", 3)]
            .into_iter()
            .map(|(w, i)| (w.to_string(), i))
            .collect();
        let model = WordLevel::builder()
            .vocab(vocab)
            .unk_token("[UNK]".into())
            .build()
            .unwrap();
        let mut original = tokenizers::Tokenizer::new(model);
        original.with_pre_tokenizer(Some(Whitespace {}));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        original.save(&path, false).unwrap();
        let ours = read_tokenizer(&path).unwrap();
        assert!(matches!(ours.get_model(), VocabModel::Other(_)));
        let a = original.encode("play a lovely song", false).unwrap();
        let b = ours.encode("play a lovely song", false).unwrap();
        assert_eq!(a.get_ids(), &[1, 2, 0, 3]);
        assert_eq!(a.get_ids(), b.get_ids());
        assert_eq!(a.get_offsets(), b.get_offsets());
        // Not a tokenizer at all: an error naming the file.
        std::fs::write(&path, "{}").unwrap();
        let e = read_tokenizer(&path).err().unwrap();
        assert!(e.contains("tokenizer.json"), "{e}");
    }

    #[test]
    fn mean_pooling_skips_padding_and_normalises() {
        // Two tokens kept ([1,0] and [3,0]), one padding token ignored.
        let v = mean_normalized(&[1.0, 0.0, 3.0, 0.0, 100.0, 100.0], &[1, 1, 0], 2);
        assert_eq!(v, vec![1.0, 0.0]);
        let v = mean_normalized(&[3.0, 4.0], &[1], 2);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }
}
