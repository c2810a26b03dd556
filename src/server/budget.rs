//! Reply budgets: every tool's text fits a `max_tokens` budget, and its
//! structured content carries the same items the text shows (so it is not
//! many times larger than the text).
//!
//! Tokens are estimated, not counted: one token per 4 bytes of ASCII and one
//! per other character. On the replies of bench/agent_tasks.py this is
//! within ±25 % of the XLM-R tokenizer of multilingual-e5-small (which the
//! benchmark uses to report real counts), erring high on Japanese.

/// Estimated tokens of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    let ascii = text.bytes().filter(u8::is_ascii).count();
    let other = text.chars().filter(|c| !c.is_ascii()).count();
    ascii.div_ceil(4) + other
}

/// Largest budget a caller may ask for.
pub const MAX_TOKENS_LIMIT: usize = 20_000;

/// A text reply under construction with a token budget.
#[derive(Debug)]
pub struct Budget {
    text: String,
    left: usize,
    /// Something did not fit.
    pub truncated: bool,
}

impl Budget {
    /// A reply of at most `max_tokens` (estimated).
    pub fn new(max_tokens: usize) -> Budget {
        Budget {
            text: String::new(),
            left: max_tokens,
            truncated: false,
        }
    }

    /// Appends `s` when it fits; returns false (and marks the reply
    /// truncated) when it does not. `s` is added whole or not at all.
    pub fn push(&mut self, s: &str) -> bool {
        let cost = estimate_tokens(s);
        if cost > self.left {
            self.truncated = true;
            return false;
        }
        self.left -= cost;
        self.text.push_str(s);
        true
    }

    /// Appends the rendering of each item in order while it fits, stopping at
    /// the first that does not (the reply is then marked truncated, as by
    /// [`Budget::push`]). Returns how many items were added, so the caller
    /// can keep the same prefix of its structured list.
    pub fn push_each<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut render: impl FnMut(T) -> String,
    ) -> usize {
        let mut shown = 0;
        for item in items {
            if !self.push(&render(item)) {
                break;
            }
            shown += 1;
        }
        shown
    }

    /// Appends `s` whatever it costs (headers, the truncation note).
    pub fn force(&mut self, s: &str) {
        self.left = self.left.saturating_sub(estimate_tokens(s));
        self.text.push_str(s);
    }

    /// Tokens left.
    pub fn left(&self) -> usize {
        self.left
    }

    /// The text, with `hint` appended when something was cut.
    pub fn finish(mut self, hint: &str) -> String {
        if self.truncated {
            self.text.push_str(hint);
            if !hint.ends_with('\n') {
                self.text.push('\n');
            }
        }
        self.text
    }
}

/// Checks a caller's `max_tokens`.
///
/// # Errors
/// A message naming the accepted range.
pub fn check_max_tokens(max_tokens: Option<usize>, default: usize) -> Result<usize, String> {
    match max_tokens {
        None => Ok(default),
        Some(n) if (100..=MAX_TOKENS_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(format!(
            "max_tokens {n} is out of range: 100-{MAX_TOKENS_LIMIT}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_keeps_whole_items_and_says_what_was_cut() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("在庫数"), 3);
        let mut b = Budget::new(3);
        assert!(b.push("12345678"));
        assert!(!b.push("123456789"));
        assert!(b.push("1"));
        assert!(b.truncated);
        assert_eq!(b.finish("… cut"), "123456781… cut\n");
        let mut b = Budget::new(3);
        assert_eq!(
            b.push_each(["1234", "123456789012", "1"], str::to_string),
            1
        );
        assert!(b.truncated && b.finish("") == "1234\n");
        assert!(check_max_tokens(Some(50), 2000).is_err());
        assert_eq!(check_max_tokens(None, 2000), Ok(2000));
    }
}
