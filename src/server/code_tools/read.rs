//! `read_file`: the lines of one file, or several whole files in one call;
//! the lines returned count as read ([`Shown`]).

use super::*;

/// Reads lines `start..=end` (1-based) of a repository file within
/// `max_tokens`; the text shows each line with its number (`n\tline`).
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
) -> Result<(FileLines, String), ToolError> {
    let crate::repo::TextLines {
        rel,
        lines,
        start,
        end,
    } = shared.repo.read_lines(file, start, end)?;
    let total = lines.len();
    let mut b = Budget::new(max_tokens);
    b.force(&format!("{rel}:{start}-{end} of {total} lines\n"));
    let wanted = &lines[start - 1..end];
    let shown = b.push_each(wanted.iter().enumerate(), |(i, l)| {
        format!("{}\t{l}\n", start + i)
    });
    let content: String = wanted[..shown].iter().map(|l| format!("{l}\n")).collect();
    let last = start - 1 + shown;
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
        },
        text,
    ))
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
        let (reads, not_read) = blocking(move || {
            let mut left = max_tokens;
            let mut out = Vec::with_capacity(files.len());
            let mut failed: Vec<(String, ToolError)> = Vec::new();
            for (i, f) in files.iter().enumerate() {
                let share = (left / (files.len() - i)).max(100);
                match read_lines(&shared, f, start, end, share) {
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
}
