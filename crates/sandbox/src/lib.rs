//! The boundary of agent-runtime: the bounded executor (`exec`), the Linux
//! sandbox around each command (`sandbox`), the attempt's zygote that starts
//! the commands (`zygote`) and the cancel token they use (`cancel`).
//!
//! Every `unsafe` block of the project lives in this crate (the main crate
//! forbids it), each with a `SAFETY:` comment, so the compiler enforces the
//! line that `docs/sandbox.md` draws: model-chosen code only ever runs
//! through [`exec::run`].

pub mod cancel;
pub mod exec;
pub mod sandbox;
pub mod zygote;
