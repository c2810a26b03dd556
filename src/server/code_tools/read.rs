//! `read_file`: the lines of one file, or several whole files in one call;
//! the lines returned count as read ([`Shown`]).

use super::*;

/// Shortest run of lines a whole-file read leaves out as shown earlier in
/// the session. At 4, an agent of the solidtime trial took the 5- and
/// 7-line holes a `query` snippet left for a file cut in pieces and read
/// 134 lines again to see them (bench/README.md § Honest agent trial);
/// from 8 lines on, the marker saves several times its own length.
const ELIDE_MIN_LINES: usize = 8;

/// Longest line (in chars) a whole-file read leaves out as shown earlier:
/// `search_text` cuts longer lines, so such a line may not have been shown
/// whole.
const ELIDE_MAX_LINE_CHARS: usize = crate::search::text::MAX_LINE_CHARS;

/// A file's lines an earlier reply of the session returned: first and
/// last line (1-based, inclusive), the Unix seconds of the reply, the tool.
pub(in crate::server) type EarlierSpan = (usize, usize, u64, Tool);

/// One piece of a read's text: a numbered line, or a run of lines left out
/// because an earlier reply of the session returned them unchanged.
enum Piece<'a> {
    Line(usize, &'a str),
    Earlier(usize, usize),
}

/// Lines `start..=end` (1-based) of `lines` as pieces: each run of at least
/// [`ELIDE_MIN_LINES`] lines inside `earlier` (1-based inclusive ranges,
/// merged and sorted) one [`Piece::Earlier`], unless a line of it is longer
/// than [`ELIDE_MAX_LINE_CHARS`].
fn pieces<'a>(
    lines: &'a [String],
    start: usize,
    end: usize,
    earlier: &[(usize, usize)],
) -> Vec<Piece<'a>> {
    let short = |n: usize| lines[n - 1].chars().count() <= ELIDE_MAX_LINE_CHARS;
    let mut out = Vec::new();
    let mut n = start;
    while n <= end {
        let run_end = earlier
            .iter()
            .find(|&&(a, b)| a <= n && n <= b)
            .map(|&(_, b)| b.min(end));
        if let Some(b) = run_end {
            let last = (n..=b).take_while(|&m| short(m)).last();
            if let Some(last) = last
                && last + 1 - n >= ELIDE_MIN_LINES
            {
                out.push(Piece::Earlier(n, last));
                n = last + 1;
                continue;
            }
        }
        out.push(Piece::Line(n, &lines[n - 1]));
        n += 1;
    }
    out
}

/// Reads lines `start..=end` (1-based) of a repository file within
/// `max_tokens`; the text shows each line with its number (`n\tline`),
/// except runs of lines in `earlier` (1-based inclusive ranges an earlier
/// reply of the session returned, the file unchanged since: see
/// [`CodeIntel::shown_earlier`]), which it names in one line each; the
/// structured [`FileLines`] holds every line and names those runs.
///
/// # Errors
/// A path outside the repository or withheld, a directory, a binary or
/// non-regular file, a start line past the end.
pub(in crate::server) fn read_lines(
    shared: &Shared,
    file: &str,
    start: Option<usize>,
    end: Option<usize>,
    max_tokens: usize,
    earlier: &BTreeMap<String, Vec<EarlierSpan>>,
) -> Result<(FileLines, String), ToolError> {
    let crate::repo::TextLines {
        rel,
        lines,
        start,
        end,
    } = shared.repo.read_lines(file, start, end)?;
    let total = lines.len();
    let earlier = unchanged_since(shared, &rel, earlier);
    let ranges: Vec<(usize, usize)> = earlier.iter().map(|&(a, b, _)| (a, b)).collect();
    let mut b = Budget::new(max_tokens);
    b.force(&format!("{rel}:{start}-{end} of {total} lines\n"));
    let pieces = pieces(&lines, start, end, &crate::session::merged_ranges(&ranges));
    let shown = b.push_each(&pieces, |p| match *p {
        Piece::Line(n, l) => format!("{n}\t{l}\n"),
        Piece::Earlier(a, b) => {
            // The tools that showed them, so the reader knows where to look.
            let mut by: Vec<&str> = earlier
                .iter()
                .filter(|&&(s, e, _)| s <= b && a <= e)
                .map(|(_, _, t)| t.name())
                .collect();
            by.sort_unstable();
            by.dedup();
            format!(
                "{a}-{b}\t… {} lines shown earlier in this session by {}, unchanged since \
                 (read_file start_line={a} end_line={b} shows them again)\n",
                b + 1 - a,
                by.join(", ")
            )
        }
    });
    let mut shown_earlier = Vec::new();
    let mut last = start - 1;
    for p in &pieces[..shown] {
        last = match *p {
            Piece::Line(n, _) => n,
            Piece::Earlier(a, b) => {
                shown_earlier.push(LineRange {
                    start_line: a,
                    end_line: b,
                });
                b
            }
        };
    }
    let content: String = lines[start - 1..last]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    let truncated = last < end;
    let text = b.finish(&format!(
        "… cut at line {last} to fit max_tokens: read_file {rel} start_line={} for more",
        last + 1
    ));
    Ok((
        FileLines {
            file: rel,
            start_line: start,
            end_line: last,
            total_lines: total,
            content,
            truncated: truncated || end < total,
            shown_earlier,
        },
        text,
    ))
}

/// Of the spans `earlier` holds for `rel`, those returned after the
/// file's last change (its mtime, whole seconds: a change in the same
/// second keeps the lines), as (first line, last line, tool); none when
/// the file's mtime cannot be read.
fn unchanged_since(
    shared: &Shared,
    rel: &str,
    earlier: &BTreeMap<String, Vec<EarlierSpan>>,
) -> Vec<(usize, usize, Tool)> {
    let Some(spans) = earlier.get(rel) else {
        return Vec::new();
    };
    let Some(changed) = std::fs::metadata(shared.repo.root().join(rel))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
    else {
        return Vec::new();
    };
    spans
        .iter()
        .filter(|&&(_, _, at, _)| at > changed)
        .map(|&(a, b, _, tool)| (a, b, tool))
        .collect()
}

impl CodeIntel {
    /// `read_file`'s reply: the lines that fit (they count as read). With
    /// `files`, each whole file from line 1 in the order given, the budget
    /// (default 2,000 tokens a file) shared out as they are read: each
    /// file may take what is left over the files still to come, so a
    /// short file leaves its share to the next.
    ///
    /// A file of `files` that a read of it alone refuses (missing, outside
    /// the repository, binary, …) is listed under `not_read` with why, and
    /// the others are read: a trial agent's one guessed path cost it the
    /// whole call (bench/README.md § Honest agent trial).
    ///
    /// # Errors
    /// Neither or both of `file` and `files`; more than
    /// [`super::READ_FILES_MAX`] files; a line range with `files`; the
    /// file's error when no file could be read.
    pub(in crate::server) async fn read_file_reply(
        &self,
        p: ReadFileParams,
    ) -> Result<Reply<ReadFileResult>, ToolError> {
        let files = match (&p.file, p.files.as_slice()) {
            (Some(f), []) => vec![f.clone()],
            (None, []) => {
                return Err(ToolError::invalid(
                    "give `file`, or `files` to read several",
                ));
            }
            (Some(_), _) => {
                return Err(ToolError::invalid(
                    "give `file` or `files`, not both (`files` may hold the one file too)",
                ));
            }
            (None, fs) if fs.len() > super::READ_FILES_MAX => {
                return Err(ToolError::invalid(format!(
                    "files names {} files: at most {} a call",
                    fs.len(),
                    super::READ_FILES_MAX
                )));
            }
            (None, fs) => {
                if p.start_line.is_some() || p.end_line.is_some() {
                    return Err(ToolError::invalid(
                        "start_line and end_line go with `file`; `files` are read from line 1",
                    ));
                }
                fs.to_vec()
            }
        };
        let max_tokens =
            check_max_tokens(p.max_tokens, 2000 * files.len()).map_err(ToolError::invalid)?;
        if let (Some(a), Some(b)) = (p.start_line, p.end_line)
            && b < a
        {
            return Err(ToolError::invalid(format!(
                "end_line {b} is before start_line {a}"
            )));
        }
        let shared = Arc::clone(&self.shared);
        let several = p.file.is_none();
        let (start, end) = (p.start_line, p.end_line);
        // A read of chosen lines shows them all; a whole-file read leaves
        // out what the session was shown already.
        let earlier = match (&p.gate.session_id, start, end) {
            (Some(id), None, None) => self.shown_earlier(id),
            _ => BTreeMap::new(),
        };
        let (reads, not_read) = blocking(move || {
            let mut left = max_tokens;
            let mut out = Vec::with_capacity(files.len());
            let mut failed: Vec<(String, ToolError)> = Vec::new();
            for (i, f) in files.iter().enumerate() {
                let share = (left / (files.len() - i)).max(100);
                match read_lines(&shared, f, start, end, share, &earlier) {
                    Ok((lines, text)) => {
                        left = left.saturating_sub(crate::server::budget::estimate_tokens(&text));
                        out.push((lines, text));
                    }
                    Err(e) => failed.push((f.clone(), e)),
                }
            }
            if out.is_empty()
                && let Some((_, e)) = failed.first()
            {
                return Err(e.clone());
            }
            Ok::<_, ToolError>((out, failed))
        })
        .await??;
        let mut seen = Shown::default();
        for (lines, _) in &reads {
            if lines.start_line == 1 && lines.end_line == lines.total_lines {
                seen.read_unit(&lines.file, lines.start_line, lines.end_line);
            } else {
                seen.read(&lines.file, lines.start_line, lines.end_line);
            }
        }
        let mut text = reads
            .iter()
            .map(|(_, t)| t.trim_end())
            .collect::<Vec<_>>()
            .join("\n\n");
        for (f, e) in &not_read {
            text.push_str(&format!("\n\nnot read: `{f}`: {}", e.message()));
        }
        let mut lines: Vec<FileLines> = reads.into_iter().map(|(l, _)| l).collect();
        let value = if several {
            ReadFileResult::Several {
                files: lines,
                not_read: not_read
                    .into_iter()
                    .map(|(file, e)| NotRead {
                        file,
                        error: e.message().to_string(),
                    })
                    .collect(),
            }
        } else {
            ReadFileResult::One(lines.remove(0))
        };
        Ok(Reply::new(value, text).with_shown(seen))
    }

    /// The lines each file's earlier replies in session `id` returned,
    /// from its evidence; none for an unknown session (the gate has
    /// refused the call by then).
    fn shown_earlier(&self, id: &str) -> BTreeMap<String, Vec<EarlierSpan>> {
        let mut out: BTreeMap<String, Vec<EarlierSpan>> = BTreeMap::new();
        let Ok(session) = self.shared.sessions.get(id) else {
            return out;
        };
        for e in &session.evidence {
            for l in &e.read_lines {
                out.entry(l.file.clone()).or_default().push((
                    l.start_line,
                    l.end_line,
                    e.at,
                    e.tool,
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("line {i}")).collect()
    }

    fn shape(p: &[Piece]) -> Vec<(usize, usize)> {
        p.iter()
            .map(|p| match *p {
                Piece::Line(n, _) => (n, n),
                Piece::Earlier(a, b) => (a, b),
            })
            .collect()
    }

    /// A run inside an earlier range is one piece when it is long enough,
    /// clipped to the lines read; a short run, or one broken by an
    /// over-long line, is shown line by line up to that line.
    #[test]
    fn runs_shown_earlier_become_one_piece() {
        let ls = lines(20);
        assert_eq!(
            shape(&pieces(&ls, 1, 16, &[(3, 10), (12, 18)])),
            [
                (1, 1),
                (2, 2),
                (3, 10),
                (11, 11),
                (12, 12),
                (13, 13),
                (14, 14),
                (15, 15),
                (16, 16)
            ]
        );
        assert_eq!(shape(&pieces(&ls, 5, 20, &[(1, 19)])), [(5, 19), (20, 20)]);
        let mut long = lines(20);
        long[9] = "x".repeat(ELIDE_MAX_LINE_CHARS + 1);
        assert_eq!(
            shape(&pieces(&long, 1, 20, &[(1, 20)])),
            [(1, 9), (10, 10), (11, 20)]
        );
    }
}
