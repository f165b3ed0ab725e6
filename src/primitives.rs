//! The server primitives (spec `server`:
//! <https://modelcontextprotocol.io/specification/2025-11-25/server>): the registries a server
//! lists and runs.
//!
//! - [`tools`]: tools registered as closures over typed arguments (`tools/list`, `tools/call`).
//! - [`resources`]: resources by URI, URI templates, contents and subscriptions.
//! - [`prompts`]: prompt templates with string arguments.
//! - [`skills`]: the Skills extension (`io.modelcontextprotocol/skills`): skills as `skill://`
//!   resources with digests, listed by `skills/list`, their directories read.

pub(crate) mod listing;
pub mod prompts;
pub mod resources;
pub mod skills;
pub mod tools;
