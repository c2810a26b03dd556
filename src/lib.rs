//! code-intel: a single-binary MCP server that gives coding agents code
//! intelligence over the repository they edit — ripgrep-speed text search,
//! tree-sitter symbols and structure, and AST-chunked multilingual semantic
//! search in an embedded LanceDB index kept in sync incrementally.
//!
//! The modules, their order and their rules are in ARCHITECTURE.md (§ Code
//! map; `architecture_tests` keeps the code to it). `cli` is the binary's
//! commands; everything else is crate-private, so rustc reports dead code.

pub(crate) mod chunk;
pub(crate) mod classify;
pub mod cli;
pub(crate) mod client;
pub(crate) mod config;
pub(crate) mod embed;
pub(crate) mod framework;
pub(crate) mod graph;
pub(crate) mod http;
pub(crate) mod index;
pub(crate) mod lang;
pub(crate) mod learn;
pub(crate) mod lexical;
pub(crate) mod model;
pub(crate) mod rank;
pub(crate) mod relevance;
pub(crate) mod repo;
pub(crate) mod runtime;
pub(crate) mod search;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod store;
pub(crate) mod util;

#[cfg(test)]
mod architecture_tests;
