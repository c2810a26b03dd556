//! The embedding service's passage queue: every client's passage request
//! waits here, and one worker embeds them a slice of [`SLICE`] texts at a
//! time, always from the request with the **fewest texts left** (shortest
//! remaining first; the oldest among equals). A sync of a few edited files
//! (tens of chunks) therefore waits for one slice of another repository's
//! bulk index, not for the whole batch that index sent before it: the
//! 105 s an agent's 4-chunk sync waited behind another repository's index
//! in an agent trial (docs/measurements.md § Interactive work during bulk
//! indexing) is what this order is for. A bulk request waits only while
//! smaller ones keep arriving, which interactive work does not do for long.
//!
//! Each reply says how long the request waited for other clients' texts
//! (its time in the queue less the time its own slices took) and how many
//! texts of other requests were queued when it arrived, so a client can
//! tell its user why a sync was slow.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::{EmbedError, Embedder};

/// Passage texts embedded between two looks at waiting queries and at the
/// queue.
pub const SLICE: usize = 16;

/// A passage request's vectors (in the order of its texts) and its wait.
#[derive(Debug)]
pub struct Embedded {
    pub vectors: Vec<Vec<f32>>,
    /// Time in the queue not spent on its own slices.
    pub waited: Duration,
    /// Texts of other requests queued when it arrived.
    pub ahead: usize,
}

struct Pending {
    id: u64,
    texts: Vec<String>,
    /// Indices of `texts`, shortest first (as one batch would be sorted, so
    /// slicing adds no padding).
    order: Vec<usize>,
    /// How many of `order` are embedded.
    done: usize,
    vectors: Vec<Vec<f32>>,
    reply: mpsc::Sender<Result<Embedded, EmbedError>>,
    /// Set when the client that asked has disconnected.
    left: Arc<AtomicBool>,
    arrived: Instant,
    /// Time spent embedding its own slices.
    own: Duration,
    ahead: usize,
}

impl Pending {
    fn remaining(&self) -> usize {
        self.order.len() - self.done
    }
}

/// The queue shared by the service's connections and its worker.
#[derive(Default)]
pub struct PassageQueue {
    jobs: Mutex<(u64, Vec<Pending>)>,
    wake: Condvar,
}

impl PassageQueue {
    /// Queues `texts`; the receiver gets the vectors, or an error. `left` is
    /// set by the connection when its client disconnects: the request is
    /// dropped before its next slice (a server that exits mid-sync leaves no
    /// work behind for the next one to wait on).
    pub fn submit(
        &self,
        texts: Vec<String>,
        left: Arc<AtomicBool>,
    ) -> mpsc::Receiver<Result<Embedded, EmbedError>> {
        let (reply, rx) = mpsc::channel();
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let ahead = jobs.1.iter().map(Pending::remaining).sum();
        jobs.0 += 1;
        let id = jobs.0;
        jobs.1.push(Pending {
            id,
            vectors: vec![Vec::new(); texts.len()],
            texts,
            order,
            done: 0,
            reply,
            left,
            arrived: Instant::now(),
            own: Duration::ZERO,
            ahead,
        });
        self.wake.notify_one();
        rx
    }

    /// The worker: embeds slices for ever, letting queries take the model
    /// between slices (`waiting_queries` > 0).
    pub fn run(&self, embedder: &dyn Embedder, waiting_queries: &AtomicUsize) -> ! {
        loop {
            {
                let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
                while jobs.1.is_empty() {
                    jobs = self.wake.wait(jobs).unwrap_or_else(|e| e.into_inner());
                }
            }
            self.step(embedder, waiting_queries);
        }
    }

    /// Embeds one slice of the request with the fewest texts left (after
    /// replying to requests that are complete or whose client left);
    /// whether there was one.
    pub fn step(&self, embedder: &dyn Embedder, waiting_queries: &AtomicUsize) -> bool {
        let (id, slice, texts) = {
            let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            settle(&mut jobs.1);
            let Some(job) = jobs.1.iter_mut().min_by_key(|j| (j.remaining(), j.arrived)) else {
                return false;
            };
            let slice: Vec<usize> = job.order[job.done..].iter().take(SLICE).copied().collect();
            let texts: Vec<String> = slice.iter().map(|&i| job.texts[i].clone()).collect();
            (job.id, slice, texts)
        };
        while waiting_queries.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        let started = Instant::now();
        let result = embedder.embed_passages(&texts);
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pos) = jobs.1.iter().position(|j| j.id == id) {
            match result {
                Ok(vectors) => {
                    let job = &mut jobs.1[pos];
                    for (v, &i) in vectors.into_iter().zip(&slice) {
                        job.vectors[i] = v;
                    }
                    job.done += slice.len();
                    job.own += started.elapsed();
                }
                Err(e) => {
                    let job = jobs.1.remove(pos);
                    let _ = job.reply.send(Err(e));
                }
            }
        }
        settle(&mut jobs.1);
        true
    }
}

/// Replies to the complete requests and drops those whose client left.
fn settle(jobs: &mut Vec<Pending>) {
    let mut i = 0;
    while i < jobs.len() {
        let (complete, left) = (
            jobs[i].remaining() == 0,
            jobs[i].left.load(Ordering::SeqCst),
        );
        if !complete && !left {
            i += 1;
            continue;
        }
        let job = jobs.remove(i);
        let _ = job.reply.send(if complete {
            Ok(Embedded {
                waited: job.arrived.elapsed().saturating_sub(job.own),
                ahead: job.ahead,
                vectors: job.vectors,
            })
        } else {
            Err(EmbedError::Inference(
                "the client left before its passages were embedded".into(),
            ))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::testing::HashedWords;

    fn texts(prefix: &str, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("{prefix} text number {i}"))
            .collect()
    }

    /// A small request that arrives while a bulk one is being embedded is
    /// served after one more slice of it, not after all of it, and both get
    /// every vector in the order of their texts.
    #[test]
    fn a_small_request_overtakes_a_bulk_one() {
        let queue = PassageQueue::default();
        let idle = AtomicUsize::new(0);
        let bulk_texts = texts("bulk", 20 * SLICE);
        let bulk = queue.submit(bulk_texts.clone(), Arc::default());
        assert!(queue.step(&HashedWords, &idle));
        let small_texts = texts("small", 20);
        let small = queue.submit(small_texts.clone(), Arc::default());
        let mut steps = 0;
        let got = loop {
            assert!(queue.step(&HashedWords, &idle));
            steps += 1;
            if let Ok(r) = small.try_recv() {
                break r.unwrap();
            }
        };
        assert_eq!(steps, 2, "20 texts are two slices");
        assert_eq!(got.ahead, 19 * SLICE, "the bulk request's texts left");
        assert_eq!(got.vectors.len(), 20);
        assert_eq!(got.vectors[7], HashedWords::vector(&small_texts[7]));
        assert!(bulk.try_recv().is_err(), "the bulk request is not done yet");
        while queue.step(&HashedWords, &idle) {}
        let bulk = bulk.recv().unwrap().unwrap();
        assert_eq!(bulk.ahead, 0);
        assert_eq!(bulk.vectors[300], HashedWords::vector(&bulk_texts[300]));
    }

    /// A request whose client left is not embedded further and is answered
    /// with an error nobody reads; an empty one is answered at once.
    #[test]
    fn requests_stop_when_their_client_left() {
        let queue = PassageQueue::default();
        let idle = AtomicUsize::new(0);
        let left = Arc::new(AtomicBool::new(false));
        let rx = queue.submit(texts("gone", 3 * SLICE), Arc::clone(&left));
        assert!(queue.step(&HashedWords, &idle));
        left.store(true, Ordering::SeqCst);
        assert!(!queue.step(&HashedWords, &idle), "nothing left to embed");
        let err = rx.recv().unwrap().unwrap_err();
        assert!(err.to_string().contains("client left"), "{err}");
        let empty = queue.submit(Vec::new(), Arc::default());
        assert!(!queue.step(&HashedWords, &idle));
        assert!(empty.recv().unwrap().unwrap().vectors.is_empty());
    }
}
