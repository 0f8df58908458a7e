//! For unit tests that need a layer this machine may not have.

/// Says why a test is skipped, where a layer it needs is missing; a
/// machine that must have every layer (`AGENT_RUNTIME_REQUIRE_LAYERS=1`)
/// fails the test instead.
pub(crate) fn skip_for(why: &str) {
    assert_ne!(
        std::env::var("AGENT_RUNTIME_REQUIRE_LAYERS").as_deref(),
        Ok("1"),
        "{why}"
    );
    eprintln!("skipping: {why}");
}
