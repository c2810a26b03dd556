//! One model per machine: a per-user embedding service that
//! the first `serve` (or `index`) starts and the others reuse, so three
//! windows on three repositories hold one tokenizer and one ONNX Runtime
//! session, not three.
//!
//! - **Where**: a Unix socket in `$XDG_RUNTIME_DIR/code-intel/` (else
//!   `~/.cache/code-intel/run/`, mode 0700), named by a hash of what decides
//!   the vectors and the protocol: this binary's version and path, the model
//!   directory, name and cache, ONNX Runtime's path, threads, batch sizes
//!   and niceness.
//!   Processes configured alike share one service; others start their own.
//! - **Start-up races**: a client that cannot connect takes an exclusive lock
//!   on `<socket>.lock`, tries again, and only then starts
//!   `code-intel embed-service` and waits for the socket (minutes when the
//!   model is downloaded first). A service that finds a live socket exits.
//! - **Protocol**: one JSON line each way. On connect the service sends
//!   `{"protocol":1,"model_id":…,"dim":384}`; a request is
//!   `{"kind":"query"|"passage","texts":[…]}`, the reply `{"vectors":[[…]]}`
//!   or `{"error":"…"}`.
//! - **Priority**: queries run at once on their connection's thread;
//!   passages on one worker thread at `embedding_nice`, in slices of
//!   [`super::passages::SLICE`] texts from the request with the fewest texts left
//!   ([`super::passages`]), so a query waits for one slice at most, and a
//!   small sync for one slice of another repository's bulk index. A
//!   passage request whose client disconnected stops at the next slice. A
//!   passage reply says how long it waited for other clients
//!   ([`EmbedWait`]).
//! - **Lifetime**: the service exits [`idle`] seconds after its last client
//!   disconnected. Its `<socket>.log` and `<socket>.lock` stay for the next
//!   start of that configuration; a start removes those of configurations
//!   unused for [`STALE_AFTER`] ([`remove_stale`]). A client whose service
//!   died restarts it once per request (and falls back to its own model if
//!   that fails: `embed::load`), so a server keeps answering.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::passages::PassageQueue;
use super::{EmbedError, EmbedWait, Embedder, LocalEmbedder};
use crate::config::Config;

/// Version of the line protocol (part of the socket's name).
const PROTOCOL: u32 = 1;
/// How long a client waits for a service it started to listen: loading
/// the model takes seconds (it was downloaded by the client before, see
/// `embed::load`); past this the client kills it and loads its own.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Seconds the service stays up without clients (`CODE_INTEL_EMBED_SERVICE_IDLE`,
/// default 30: long enough for `code-intel index` followed by `serve`).
fn idle() -> Duration {
    let secs = std::env::var("CODE_INTEL_EMBED_SERVICE_IDLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    Duration::from_secs(secs)
}

/// Whether `embed::load` goes through the shared service: on unless
/// `shared_embedder` is false in the config or `CODE_INTEL_SHARED_EMBEDDER`
/// is `0`/`false`.
pub fn enabled(config: &Config) -> bool {
    let env_off = std::env::var("CODE_INTEL_SHARED_EMBEDDER")
        .is_ok_and(|v| v == "0" || v.eq_ignore_ascii_case("false"));
    config.shared_embedder && !env_off
}

/// The directory of the sockets (created 0700).
fn socket_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("code-intel"),
        None => {
            let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
            home.join(".cache").join("code-intel").join("run")
        }
    };
    std::fs::create_dir_all(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// The socket of the service that serves `config`'s model.
///
/// # Errors
/// The socket directory cannot be created.
pub fn socket_path(config: &Config) -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe().unwrap_or_default();
    let key = serde_json::json!({
        "protocol": PROTOCOL,
        "version": env!("CARGO_PKG_VERSION"),
        "exe": exe,
        "model_dir": config.model_dir,
        "cache": crate::model::hub_cache_dir(config),
        "ort": [
            serde_json::to_value(&config.ort_dylib_path).unwrap_or_default(),
            serde_json::to_value(std::env::var_os("ORT_DYLIB_PATH")).unwrap_or_default(),
        ],
        "model": config.embedding_model,
        "nice": config.embedding_nice,
        "threads": config.embedding_threads,
        "batch": [config.embedding_batch_size, config.embedding_batch_tokens],
    });
    let hash = crate::util::sha256_hex(key.to_string().as_bytes());
    Ok(socket_dir()?.join(format!("embed-{}.sock", &hash[..16])))
}

/// Whether a service for `config`'s model listens now (it answers its
/// greeting), with its socket; for `status`.
pub fn running(config: &Config) -> (Option<PathBuf>, bool) {
    match socket_path(config) {
        Ok(p) => {
            let up = Conn::open(&p).is_ok();
            (Some(p), up)
        }
        Err(_) => (None, false),
    }
}

#[derive(Serialize, Deserialize)]
struct Hello {
    protocol: u32,
    model_id: String,
    dim: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Query,
    Passage,
}

#[derive(Serialize, Deserialize)]
struct Request {
    kind: Kind,
    texts: Vec<String>,
}

#[derive(Serialize, Deserialize, Default)]
struct Response {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    vectors: Vec<Vec<f32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// A passage request's time in the queue behind other clients' texts,
    /// milliseconds, and how many of their texts were queued when it came.
    #[serde(default, skip_serializing_if = "is_zero")]
    waited_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    ahead: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One connection to the service.
struct Conn {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Conn {
    fn open(path: &Path) -> std::io::Result<(Conn, Hello)> {
        let writer = UnixStream::connect(path)?;
        let mut reader = BufReader::new(writer.try_clone()?);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let hello: Hello = serde_json::from_str(&line)
            .map_err(|e| std::io::Error::other(format!("bad greeting: {e}")))?;
        if hello.protocol != PROTOCOL {
            return Err(std::io::Error::other("protocol mismatch"));
        }
        Ok((Conn { reader, writer }, hello))
    }

    fn call(&mut self, req: &Request) -> std::io::Result<Response> {
        let mut line = serde_json::to_string(req).map_err(std::io::Error::other)?;
        line.push('\n');
        self.writer.write_all(line.as_bytes())?;
        let mut reply = String::new();
        if self.reader.read_line(&mut reply)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        serde_json::from_str(&reply).map_err(std::io::Error::other)
    }
}

/// The [`Embedder`] of a client: requests go to the shared service over
/// kept connections, re-established (and the service restarted) when they
/// broke. Queries and passages have a connection each: a background sync's
/// passage request holds its connection for minutes, and a query must not
/// wait behind it (the service serves each connection on its own thread).
pub struct ServiceEmbedder {
    path: PathBuf,
    config: Config,
    /// [queries, passages].
    conns: [Mutex<Option<Conn>>; 2],
    model_id: String,
    dim: usize,
    /// Waits of passage requests since [`Embedder::take_wait`] last read it.
    wait: Mutex<EmbedWait>,
}

impl ServiceEmbedder {
    /// Connects to the service of `config`'s model, starting it when none
    /// runs (blocking: seconds while it loads the model, minutes when it
    /// downloads it first).
    ///
    /// # Errors
    /// The socket directory, the lock or the process could not be made, or
    /// the service exited before it listened (its log is named).
    pub fn connect(config: &Config) -> Result<ServiceEmbedder, String> {
        let path = socket_path(config).map_err(|e| format!("socket directory: {e}"))?;
        let (conn, hello) = connect_or_start(&path, config)?;
        Ok(ServiceEmbedder {
            path,
            config: config.clone(),
            conns: [Mutex::new(Some(conn)), Mutex::new(None)],
            model_id: hello.model_id,
            dim: hello.dim,
            wait: Mutex::default(),
        })
    }

    fn request(&self, kind: Kind, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let slot = match kind {
            Kind::Query => &self.conns[0],
            Kind::Passage => &self.conns[1],
        };
        let req = Request {
            kind,
            texts: texts.to_vec(),
        };
        let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
        let mut last = String::new();
        for _ in 0..2 {
            if guard.is_none() {
                match connect_or_start(&self.path, &self.config) {
                    Ok((c, _)) => *guard = Some(c),
                    Err(e) => {
                        last = e;
                        continue;
                    }
                }
            }
            let Some(conn) = guard.as_mut() else { continue };
            match conn.call(&req) {
                Ok(Response { error: Some(e), .. }) => return Err(EmbedError::Inference(e)),
                Ok(r) if r.vectors.len() == texts.len() => {
                    let mut wait = self.wait.lock().unwrap_or_else(|e| e.into_inner());
                    wait.waited += Duration::from_millis(r.waited_ms);
                    wait.texts_ahead = wait.texts_ahead.max(r.ahead as usize);
                    return Ok(r.vectors);
                }
                Ok(r) => {
                    return Err(EmbedError::Inference(format!(
                        "embedding service returned {} vectors for {} texts",
                        r.vectors.len(),
                        texts.len()
                    )));
                }
                Err(e) => {
                    last = format!("embedding service connection: {e}");
                    *guard = None;
                }
            }
        }
        Err(EmbedError::Inference(last))
    }
}

impl Embedder for ServiceEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn model_id(&self) -> String {
        self.model_id.clone()
    }

    fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.request(Kind::Passage, texts)
    }

    fn embed_queries(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.request(Kind::Query, texts)
    }

    fn take_wait(&self) -> EmbedWait {
        std::mem::take(&mut *self.wait.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// How long a configuration's log and start lock stay after its service's
/// last start: a week. Every configuration a test run or a changed setting
/// made leaves a pair; nothing else removes them.
const STALE_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

/// Removes from `dir` the `embed-*.log` last written more than `stale_after`
/// ago, with their `.lock` and a `.sock` no service answers on (one killed
/// with SIGKILL leaves it), unless a service answers on the socket or a
/// process holds the lock (a start in progress holds it and has just written
/// the log). The lock is held while the files go, so a start of that
/// configuration waits for the removal ([`crate::util::lock_file`] then
/// locks the new file, not the removed one). Returns how many logs went.
/// Errors are ignored: this is tidying.
fn remove_stale(dir: &Path, stale_after: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let log = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("embed-") && name.ends_with(".log")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > stale_after));
        let sock = log.with_extension("sock");
        if !old || UnixStream::connect(&sock).is_ok() {
            continue;
        }
        let lock = log.with_extension("lock");
        let held = match std::fs::OpenOptions::new().write(true).open(&lock) {
            Ok(f) => f.try_lock().is_ok().then_some(Some(f)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
            Err(_) => None,
        };
        let Some(_held) = held else {
            continue;
        };
        let _ = std::fs::remove_file(&sock);
        if std::fs::remove_file(&log).is_ok() {
            removed += 1;
        }
        let _ = std::fs::remove_file(&lock);
    }
    removed
}

/// Connects, or (under the start lock) starts the service and waits for it.
fn connect_or_start(path: &Path, config: &Config) -> Result<(Conn, Hello), String> {
    if let Ok(c) = Conn::open(path) {
        return Ok(c);
    }
    let lock_path = path.with_extension("lock");
    let _lock =
        crate::util::lock_file(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    if let Ok(c) = Conn::open(path) {
        return Ok(c);
    }
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        remove_stale(dir, STALE_AFTER);
    }
    let log_path = path.with_extension("log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let spec = serde_json::to_string(config).map_err(|e| e.to_string())?;
    let mut child = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(exe)
            .args(["embed-service", "--socket"])
            .arg(path)
            .args(["--config", &spec])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            // Its own process group: a Ctrl-C meant for one server does not
            // take the service the others use.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the embedding service: {e}"))?
    };
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() > START_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the embedding service did not listen within {START_TIMEOUT:?} (log: {})",
                log_path.display()
            ));
        }
        if let Ok(c) = Conn::open(path) {
            // Reap it when it exits, so it does not linger as a zombie of
            // this process.
            std::thread::spawn(move || child.wait());
            return Ok(c);
        }
        if let Ok(Some(status)) = child.try_wait() {
            let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail = tail.lines().last().unwrap_or("").to_string();
            return Err(format!(
                "the embedding service exited ({status}) before it listened: {tail} (log: {})",
                log_path.display()
            ));
        }
    }
}

/// `code-intel embed-service`: loads the model, serves `socket` until no
/// client has been connected for [`idle`], then removes it.
///
/// # Errors
/// The model cannot be loaded or the socket cannot be bound.
pub fn serve(socket: &Path, config: &Config) -> anyhow::Result<()> {
    let embedder = Arc::new(LocalEmbedder::load(config)?);
    let listener = match UnixListener::bind(socket) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && Conn::open(socket).is_ok() => {
            tracing::info!(
                "an embedding service already listens on {}",
                socket.display()
            );
            return Ok(());
        }
        Err(_) => {
            let _ = std::fs::remove_file(socket);
            UnixListener::bind(socket)?
        }
    };
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    }
    tracing::info!("embedding service on {}", socket.display());
    let hello = serde_json::to_string(&Hello {
        protocol: PROTOCOL,
        model_id: embedder.model_id(),
        dim: embedder.dim(),
    })?;
    let clients = Arc::new(AtomicUsize::new(0));
    let since = Arc::new(Mutex::new(Instant::now()));
    let waiting_queries = Arc::new(AtomicUsize::new(0));
    // Passages: one worker at the configured niceness.
    let passages = Arc::new(PassageQueue::default());
    {
        let embedder = Arc::clone(&embedder);
        let waiting = Arc::clone(&waiting_queries);
        let passages = Arc::clone(&passages);
        let nice = config.embedding_nice;
        std::thread::spawn(move || {
            super::lower_thread_priority(nice);
            passages.run(&*embedder, &waiting)
        });
    }
    {
        let clients = Arc::clone(&clients);
        let since = Arc::clone(&since);
        let socket = socket.to_path_buf();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(500));
                let idle_for = since.lock().unwrap_or_else(|e| e.into_inner()).elapsed();
                if clients.load(Ordering::SeqCst) == 0 && idle_for >= idle() {
                    let _ = std::fs::remove_file(&socket);
                    tracing::info!("no clients for {idle_for:?}: embedding service exits");
                    std::process::exit(0);
                }
            }
        });
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        clients.fetch_add(1, Ordering::SeqCst);
        let (clients, since, embedder, waiting, passages, hello) = (
            Arc::clone(&clients),
            Arc::clone(&since),
            Arc::clone(&embedder),
            Arc::clone(&waiting_queries),
            Arc::clone(&passages),
            hello.clone(),
        );
        std::thread::spawn(move || {
            let _ = serve_client(stream, &hello, &embedder, &waiting, &passages);
            *since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            clients.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// Whether the client on `reader` has disconnected, checked without
/// blocking and without consuming anything it sent (the bytes stay in the
/// reader's buffer).
fn client_left(reader: &mut BufReader<UnixStream>) -> bool {
    if reader.get_ref().set_nonblocking(true).is_err() {
        return false;
    }
    let left = match reader.fill_buf() {
        Ok(buffered) => buffered.is_empty(),
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    };
    let _ = reader.get_ref().set_nonblocking(false);
    left
}

/// One client's requests until it disconnects.
fn serve_client(
    stream: UnixStream,
    hello: &str,
    embedder: &LocalEmbedder,
    waiting: &AtomicUsize,
    passages: &PassageQueue,
) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    writer.write_all(format!("{hello}\n").as_bytes())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let response = match serde_json::from_str::<Request>(&line) {
            Err(e) => Response {
                error: Some(format!("bad request: {e}")),
                ..Response::default()
            },
            Ok(Request {
                kind: Kind::Query,
                texts,
            }) => {
                waiting.fetch_add(1, Ordering::SeqCst);
                let r = embedder.embed_queries(&texts);
                waiting.fetch_sub(1, Ordering::SeqCst);
                response(r)
            }
            Ok(Request {
                kind: Kind::Passage,
                texts,
            }) => {
                let left = Arc::new(AtomicBool::new(false));
                let rx = passages.submit(texts, Arc::clone(&left));
                loop {
                    match rx.recv_timeout(Duration::from_millis(250)) {
                        Ok(Ok(done)) => {
                            break Response {
                                vectors: done.vectors,
                                waited_ms: done.waited.as_millis() as u64,
                                ahead: done.ahead as u64,
                                ..Response::default()
                            };
                        }
                        Ok(Err(e)) => break response(Err(e)),
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                            if client_left(&mut reader) {
                                left.store(true, Ordering::SeqCst);
                                return Ok(());
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                            break Response {
                                error: Some("the passage worker stopped".into()),
                                ..Response::default()
                            };
                        }
                    }
                }
            }
        };
        let mut out = serde_json::to_string(&response).map_err(std::io::Error::other)?;
        out.push('\n');
        writer.write_all(out.as_bytes())?;
    }
}

fn response(r: Result<Vec<Vec<f32>>, EmbedError>) -> Response {
    match r {
        Ok(vectors) => Response {
            vectors,
            ..Response::default()
        },
        Err(e) => Response {
            error: Some(e.to_string()),
            ..Response::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `client_left` tells a closed peer from an open, silent one, and
    /// leaves what the peer sent to be read.
    #[test]
    fn a_closed_client_is_seen_without_consuming_its_bytes() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut reader = BufReader::new(ours);
        assert!(!client_left(&mut reader));
        (&theirs).write_all(b"{\"kind\":\"query\"}\n").unwrap();
        assert!(!client_left(&mut reader));
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert_eq!(line, "{\"kind\":\"query\"}\n");
        drop(theirs);
        assert!(client_left(&mut reader));
    }

    /// A configuration's files go once unused for the stale age (a log
    /// without a lock, and a socket nobody answers on, too); a fresh pair,
    /// one a service answers on, one whose lock a start holds, and files
    /// that are not the service's stay.
    #[test]
    fn stale_logs_and_locks_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let made = |name: &str, days_ago: u64| {
            let p = dir.path().join(name);
            let f = std::fs::File::create(&p).unwrap();
            let when = std::time::SystemTime::now() - Duration::from_secs(days_ago * 24 * 3600);
            f.set_modified(when).unwrap();
            p
        };
        made("embed-old.log", 10);
        made("embed-old.lock", 10);
        made("embed-nolock.log", 10);
        made("embed-fresh.log", 1);
        made("embed-fresh.lock", 1);
        made("embed-live.log", 10);
        let _live = UnixListener::bind(dir.path().join("embed-live.sock")).unwrap();
        made("embed-dead.log", 10);
        drop(UnixListener::bind(dir.path().join("embed-dead.sock")).unwrap());
        made("embed-busy.log", 10);
        let busy = crate::util::lock_file(&made("embed-busy.lock", 10)).unwrap();
        made("other.log", 10);
        assert_eq!(remove_stale(dir.path(), STALE_AFTER), 3);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "embed-busy.lock",
                "embed-busy.log",
                "embed-fresh.lock",
                "embed-fresh.log",
                "embed-live.log",
                "embed-live.sock",
                "other.log"
            ]
        );
        drop(busy);
        assert_eq!(remove_stale(dir.path(), STALE_AFTER), 1);
    }
}
