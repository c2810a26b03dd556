//! A Unigram tokenizer model (SentencePiece's, as in XLM-R and so
//! multilingual-e5) that holds its vocabulary in an FST instead of the
//! `tokenizers` crate's trie of hash maps.
//!
//! The crate's `Unigram` stores 250,002 pieces (2.6 MB of text) as a trie of
//! 782 k `AHashMap` nodes: 288 MB of heap, most of what the embedding
//! service held after the model's weights were mapped (measured
//! 2026-11-25, a probe binary; see `weights.rs`). Here the pieces are one
//! [`fst::Map`] (piece bytes → id) plus one string and an offset table for
//! id → piece: a few MB.
//!
//! Everything else is the crate's: [`CompactUnigram`] implements
//! [`tokenizers::Model`] and sits in a `TokenizerImpl` with the normalizer,
//! pre-tokenizer, post-processor and added tokens of `tokenizer.json`.
//! `tokenize` is the crate's `Unigram::encode_optimized` (SentencePiece's
//! `unigram_model.cc` Viterbi) step for step: prefixes tried shortest first,
//! a candidate replaces the best path ending at the same byte only when its
//! score is strictly higher, a character no piece starts with gets `<unk>`
//! at the lowest score − 10, neighbouring unknowns fused into one token,
//! byte fallback when the model has it. The unit test
//! `same_tokens_as_the_crate` checks ids and offsets against the crate's
//! `Unigram` on real text.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use fst::{Map, MapBuilder};
use tokenizers::models::TrainerWrapper;
use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::{Model, Token};

/// SentencePiece's penalty for an unknown character under the lowest piece
/// score (`kUnkPenalty` in `unigram_model.cc`; `K_UNK_PENALTY` in the crate).
const UNK_PENALTY: f64 = 10.0;

/// The `model` object of a `tokenizer.json` whose `type` is `Unigram`.
#[derive(serde::Deserialize)]
pub struct UnigramJson {
    #[serde(rename = "type")]
    pub kind: String,
    pub unk_id: Option<usize>,
    pub vocab: Vec<(String, f64)>,
    #[serde(default)]
    pub byte_fallback: bool,
}

/// A Unigram model over an FST of its pieces; see the module docs.
pub struct CompactUnigram {
    /// Piece bytes → id. A piece listed twice maps to its last id, as the
    /// crate's `token_to_ids` map does.
    ids: Map<Vec<u8>>,
    /// Every piece, concatenated in id order; piece `i` is
    /// `text[offsets[i]..offsets[i + 1]]` (byte offsets).
    text: String,
    offsets: Vec<u32>,
    scores: Vec<f64>,
    min_score: f64,
    unk_id: Option<u32>,
    byte_fallback: bool,
}

impl CompactUnigram {
    /// Builds the model from `tokenizer.json`'s `model` object.
    ///
    /// # Errors
    /// The vocabulary is empty, `unk_id` is outside it, or it holds more
    /// than 4 GiB of piece text.
    pub fn new(json: UnigramJson) -> Result<Self, String> {
        let n = json.vocab.len();
        if n == 0 {
            return Err("the Unigram vocabulary is empty".into());
        }
        if json.unk_id.is_some_and(|u| u >= n) {
            return Err(format!(
                "unk_id {:?} is outside the vocabulary of {n}",
                json.unk_id
            ));
        }
        let mut text = String::new();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut scores = Vec::with_capacity(n);
        offsets.push(0);
        for (piece, score) in &json.vocab {
            text.push_str(piece);
            offsets.push(u32::try_from(text.len()).map_err(|_| "vocabulary over 4 GiB")?);
            scores.push(*score);
        }
        let min_score = scores.iter().copied().fold(f64::INFINITY, f64::min);
        // The FST takes keys in byte order, once each: sort by (bytes, id)
        // and keep a piece's last id.
        let mut order: Vec<u32> = (0..n as u32).collect();
        let piece = |i: u32| &text[offsets[i as usize] as usize..offsets[i as usize + 1] as usize];
        order.sort_by(|&a, &b| piece(a).as_bytes().cmp(piece(b).as_bytes()).then(a.cmp(&b)));
        let mut builder = MapBuilder::memory();
        for (k, &id) in order.iter().enumerate() {
            let last = order
                .get(k + 1)
                .is_none_or(|&next| piece(next) != piece(id));
            if last {
                builder
                    .insert(piece(id), u64::from(id))
                    .map_err(|e| e.to_string())?;
            }
        }
        let ids = builder.into_map();
        Ok(CompactUnigram {
            ids,
            text,
            offsets,
            scores,
            min_score,
            unk_id: json.unk_id.map(|u| u as u32),
            byte_fallback: json.byte_fallback,
        })
    }

    fn piece(&self, id: u32) -> Option<&str> {
        let i = id as usize;
        let (start, end) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        Some(&self.text[start as usize..end as usize])
    }

    /// Calls `found(length in bytes, id)` for every piece that is a prefix
    /// of `bytes`, shortest first (the order of the crate's trie search).
    fn prefixes(&self, bytes: &[u8], mut found: impl FnMut(usize, u32)) {
        let fst = self.ids.as_fst();
        let mut node = fst.root();
        let mut out = fst::raw::Output::zero();
        for (i, &b) in bytes.iter().enumerate() {
            let Some(t) = node.find_input(b) else {
                return;
            };
            let t = node.transition(t);
            out = out.cat(t.out);
            node = fst.node(t.addr);
            if node.is_final() {
                found(i + 1, out.cat(node.final_output()).value() as u32);
            }
        }
    }

    /// The best segmentation of `sentence` as byte ranges with their piece
    /// ids (`None` for a run of unknown characters): the crate's
    /// `encode_optimized`.
    fn segment(&self, sentence: &str) -> Vec<(usize, usize, Option<u32>)> {
        #[derive(Clone, Copy)]
        struct Best {
            score: f64,
            start: Option<usize>,
            id: Option<u32>,
        }
        let size = sentence.len();
        let bytes = sentence.as_bytes();
        let unk_score = self.min_score - UNK_PENALTY;
        let mut best = vec![
            Best {
                score: 0.0,
                start: None,
                id: None,
            };
            size + 1
        ];
        for (start, ch) in sentence.char_indices() {
            let here = best[start].score;
            let mblen = ch.len_utf8();
            let mut single = false;
            self.prefixes(&bytes[start..], |len, id| {
                let candidate = self.scores[id as usize] + here;
                let target = &mut best[start + len];
                if target.start.is_none() || candidate > target.score {
                    *target = Best {
                        score: candidate,
                        start: Some(start),
                        id: Some(id),
                    };
                }
                single |= len == mblen;
            });
            if !single {
                let candidate = unk_score + here;
                let target = &mut best[start + mblen];
                if target.start.is_none() || candidate > target.score {
                    *target = Best {
                        score: candidate,
                        start: Some(start),
                        id: self.unk_id,
                    };
                }
            }
        }
        // Back from the end; unknowns next to each other become one range.
        let mut out: Vec<(usize, usize, Option<u32>)> = Vec::new();
        let mut end = size;
        while end > 0 {
            let node = best[end];
            let s = node.start.unwrap_or(0);
            let unknown = node.id.is_none() || node.id == self.unk_id;
            match out.last_mut() {
                Some(last) if unknown && last.2.is_none() => last.0 = s,
                _ => out.push((s, end, if unknown { None } else { node.id })),
            }
            end = s;
        }
        out.reverse();
        out
    }
}

impl Model for CompactUnigram {
    type Trainer = TrainerWrapper;

    /// The crate's `Unigram::tokenize`: the pieces of [`Self::segment`],
    /// each looked up again by its text (a fused run of unknowns that
    /// happens to be a piece gets that piece's id, as in the crate).
    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        if sequence.is_empty() {
            return Ok(Vec::new());
        }
        let mut tokens = Vec::new();
        for (start, end, _) in self.segment(sequence) {
            let piece = &sequence[start..end];
            let id = match self.token_to_id(piece) {
                Some(id) => id,
                None => {
                    if self.byte_fallback {
                        let bytes: Option<Vec<Token>> = piece
                            .bytes()
                            .map(|b| {
                                let name = format!("<0x{b:02X}>");
                                self.token_to_id(&name)
                                    .map(|id| Token::new(id, name, (start, end)))
                            })
                            .collect();
                        if let Some(bytes) = bytes {
                            tokens.extend(bytes);
                            continue;
                        }
                    }
                    self.unk_id
                        .ok_or("an unknown character, and the model has no unk_id")?
                }
            };
            tokens.push(Token::new(id, piece.to_string(), (start, end)));
        }
        Ok(tokens)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).map(|id| id as u32)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.piece(id).map(str::to_string)
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        let mut stream = self.ids.stream();
        let mut vocab = HashMap::new();
        use fst::Streamer;
        while let Some((k, id)) = stream.next() {
            vocab.insert(String::from_utf8_lossy(k).into_owned(), id as u32);
        }
        vocab
    }

    fn get_vocab_size(&self) -> usize {
        self.scores.len()
    }

    fn save(&self, _folder: &Path, _prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        Err("CompactUnigram is read-only: save the tokenizer.json it was built from".into())
    }

    fn get_trainer(&self) -> TrainerWrapper {
        TrainerWrapper::UnigramTrainer(UnigramTrainer::default())
    }
}
