//! The one error type of tool handlers, turned into an MCP result here and
//! nowhere else. Every failure is a tool result with `isError: true`, a text
//! the agent can act on, and structured content `{error, message, …}`:
//! argument errors included, so the model sees what to correct (MCP
//! SEP-1303: input validation errors are tool execution errors). Unknown
//! tools and undecodable requests are JSON-RPC errors, answered by rmcp and
//! by our transport (`transport.rs`).

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};

use crate::embed::EmbedError;
use crate::index::IndexError;
use crate::learn::LearnError;
use crate::rank::RankError;
use crate::repo::{PathError, ReadError};
use crate::search::symbols::SymbolError;
use crate::search::text::TextSearchError;
use crate::session::{Phase, Rejected};
use crate::store::StoreError;

/// Why a tool call did not succeed.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolError {
    /// The arguments are wrong; the message says how to fix them.
    InvalidArgument(String),
    /// The session's gate refused the call.
    Refused {
        phase: Option<Phase>,
        reason: String,
        recovery_options: Vec<String>,
    },
    /// Not ready yet (the model is loading): call again after a while.
    NotReady {
        message: String,
        retry_after_seconds: u64,
    },
    /// Something the tool needs cannot be had (the model or ONNX Runtime
    /// failed to load); the message names the fix.
    Unavailable(String),
    /// The tool ran and failed (an unreadable index, a write error).
    Failed(String),
}

impl ToolError {
    /// `error` field of the structured content.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::InvalidArgument(_) => "invalid_argument",
            ToolError::Refused { .. } => "gate_refused",
            ToolError::NotReady { .. } => "model_loading",
            ToolError::Unavailable(_) => "model_unavailable",
            ToolError::Failed(_) => "failed",
        }
    }

    /// The message for people and models.
    pub fn message(&self) -> &str {
        match self {
            ToolError::InvalidArgument(m)
            | ToolError::Unavailable(m)
            | ToolError::Failed(m)
            | ToolError::NotReady { message: m, .. }
            | ToolError::Refused { reason: m, .. } => m,
        }
    }

    /// The structured content of the error result.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "error": self.kind(), "message": self.message() });
        match self {
            ToolError::Refused {
                phase,
                recovery_options,
                ..
            } => {
                v["phase"] = serde_json::json!(phase);
                v["recovery_options"] = serde_json::json!(recovery_options);
            }
            ToolError::NotReady {
                retry_after_seconds,
                ..
            } => v["retry_after_seconds"] = serde_json::json!(retry_after_seconds),
            _ => {}
        }
        v
    }

    /// The error as a tool result.
    pub fn into_result(self) -> CallToolResult {
        let v = self.to_json();
        let text = match &self {
            ToolError::Refused {
                recovery_options, ..
            } if !recovery_options.is_empty() => format!(
                "refused: {} Recovery: {}.",
                self.message(),
                recovery_options.join(", ")
            ),
            ToolError::NotReady {
                retry_after_seconds,
                ..
            } => format!(
                "{}: {} (retry after {retry_after_seconds} s)",
                self.kind(),
                self.message()
            ),
            // Clients and scripts key on these words (`model_loading`,
            // `model_unavailable`) in the text as well.
            ToolError::Unavailable(_) => self.to_string(),
            _ => self.message().to_string(),
        };
        let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
        r.structured_content = Some(v);
        r
    }

    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::InvalidArgument(message.into())
    }

    pub fn failed(message: impl std::fmt::Display) -> ToolError {
        ToolError::Failed(message.to_string())
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_result().into())
    }
}

impl From<PathError> for ToolError {
    fn from(e: PathError) -> Self {
        match e {
            PathError::Escape(_)
            | PathError::NotFound(_)
            | PathError::Pattern { .. }
            | PathError::Sensitive(_)
            | PathError::TooLong { .. } => ToolError::InvalidArgument(e.to_string()),
            PathError::Root { .. } => ToolError::Failed(e.to_string()),
        }
    }
}

impl From<ReadError> for ToolError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Path(p) => p.into(),
            other => ToolError::InvalidArgument(other.to_string()),
        }
    }
}

impl From<TextSearchError> for ToolError {
    fn from(e: TextSearchError) -> Self {
        match e {
            TextSearchError::Path(p) => p.into(),
            other => ToolError::InvalidArgument(other.to_string()),
        }
    }
}

impl From<SymbolError> for ToolError {
    fn from(e: SymbolError) -> Self {
        match e {
            SymbolError::Path(p) => p.into(),
            other => ToolError::Failed(other.to_string()),
        }
    }
}

impl From<LearnError> for ToolError {
    fn from(e: LearnError) -> Self {
        match e {
            LearnError::UnknownSession(_) => ToolError::InvalidArgument(e.to_string()),
            other => ToolError::Failed(other.to_string()),
        }
    }
}

impl From<Rejected> for ToolError {
    fn from(e: Rejected) -> Self {
        match e {
            Rejected::Refused(r) => ToolError::Refused {
                phase: None,
                reason: r.reason,
                recovery_options: r.recovery_options,
            },
            Rejected::Invalid(m) => ToolError::InvalidArgument(m),
        }
    }
}

macro_rules! failed_from {
    ($($t:ty),*) => {$(
        impl From<$t> for ToolError {
            fn from(e: $t) -> Self {
                ToolError::Failed(e.to_string())
            }
        }
    )*};
}
failed_from!(StoreError, EmbedError, RankError, IndexError);
