//! Test hooks: a way for tests to see what a machine without a layer
//! does, on a machine that has it.
//!
//! In a build with the `test-hooks` feature and debug assertions,
//! `AGENT_RUNTIME_TEST_DISABLE_LAYERS=landlock,seccomp` makes the probe
//! report those layers unavailable, so `auto` leaves them out and
//! `required` fails naming them. A hook only removes layers, never adds
//! one or changes how an available one is built. In any other build
//! (`cargo build --release` among them) the hooks are compiled out: the
//! variable is never read and [`test_hooks`] is `None`, which `doctor`
//! shows by printing no `test hooks:` line.

/// The variable naming the layers to remove, separated by commas.
pub const TEST_HOOKS_ENV: &str = "AGENT_RUNTIME_TEST_DISABLE_LAYERS";

/// The layers a hook can remove: the probe's own (`cgroup` is found by
/// the cgroup module, apart from the probe, and cannot be removed), and
/// `agent_builtins`, the leash's switch that turns a leashed agent's own
/// tools off, so a test shows what holds without it (the agent's sandbox).
pub const REMOVABLE_LAYERS: [&str; 7] = [
    "landlock",
    "network",
    "rlimits",
    "namespaces",
    "seccomp",
    "keyring",
    "agent_builtins",
];

/// What the hooks of this process do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestHooks {
    /// Layers reported unavailable, in the order of [`REMOVABLE_LAYERS`].
    pub removed: Vec<&'static str>,
    /// Names in the variable that are no removable layer (ignored).
    pub unknown: Vec<String>,
}

/// The hooks of this process, read once; `None` in a build without them.
pub fn test_hooks() -> Option<&'static TestHooks> {
    #[cfg(all(feature = "test-hooks", debug_assertions))]
    {
        static HOOKS: std::sync::OnceLock<TestHooks> = std::sync::OnceLock::new();
        Some(HOOKS.get_or_init(|| {
            let value = std::env::var_os(TEST_HOOKS_ENV).unwrap_or_default();
            TestHooks::parse(&value.to_string_lossy())
        }))
    }
    #[cfg(not(all(feature = "test-hooks", debug_assertions)))]
    {
        None
    }
}

impl TestHooks {
    /// Whether the hooks remove `layer` (one of [`REMOVABLE_LAYERS`]).
    pub fn removes(&self, layer: &str) -> bool {
        self.removed.contains(&layer)
    }

    /// Why a removed layer is unavailable, naming it.
    pub fn reason(layer: &str) -> String {
        format!("removed by a test hook: {TEST_HOOKS_ENV} names {layer}")
    }

    /// The `doctor` line: hooks are compiled in, and what they removed.
    pub fn describe(&self) -> String {
        let mut line = if self.removed.is_empty() {
            format!("test hooks: on in this build; {TEST_HOOKS_ENV} removes no layer")
        } else {
            format!(
                "test hooks: on in this build; {TEST_HOOKS_ENV} removed {}",
                self.removed.join(", ")
            )
        };
        if !self.unknown.is_empty() {
            line.push_str(&format!(
                "; ignored {} (removable: {})",
                self.unknown.join(", "),
                REMOVABLE_LAYERS.join(", ")
            ));
        }
        line
    }

    /// The hooks a value of [`TEST_HOOKS_ENV`] asks for.
    #[cfg(any(test, all(feature = "test-hooks", debug_assertions)))]
    fn parse(value: &str) -> TestHooks {
        let names: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        TestHooks {
            removed: REMOVABLE_LAYERS
                .into_iter()
                .filter(|layer| names.contains(layer))
                .collect(),
            unknown: names
                .iter()
                .filter(|name| !REMOVABLE_LAYERS.contains(name))
                .map(|name| name.to_string())
                .collect(),
        }
    }

    /// `probe` with the removed layers made unavailable; nothing else
    /// changes, and nothing unavailable becomes available.
    #[cfg(any(test, all(feature = "test-hooks", debug_assertions)))]
    pub(crate) fn apply(&self, mut probe: super::Probe) -> super::Probe {
        for layer in &self.removed {
            let reason = TestHooks::reason(layer);
            match *layer {
                "landlock" => probe.landlock_abi = Err(reason),
                "network" => probe.network = Err(reason),
                "rlimits" => probe.rlimits = Err(reason),
                "namespaces" => probe.namespaces = Err(reason),
                "seccomp" => probe.seccomp = Err(reason),
                "keyring" => probe.keyrings = false,
                _ => {}
            }
        }
        probe
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{NetIsolation, Probe};

    fn everything() -> Probe {
        Probe {
            landlock_abi: Ok(6),
            network: Ok(NetIsolation::NetNs),
            rlimits: Ok(()),
            namespaces: Ok(()),
            seccomp: Ok(100),
            keyrings: true,
        }
    }

    #[test]
    fn names_are_split_on_commas_and_unknown_ones_kept_apart() {
        let hooks = TestHooks::parse(" seccomp,landlock ,, cgroup");
        assert_eq!(hooks.removed, ["landlock", "seccomp"]);
        assert_eq!(hooks.unknown, ["cgroup"]);
        assert_eq!(TestHooks::parse(""), TestHooks::default());
    }

    #[test]
    fn a_hook_removes_only_what_it_names() {
        let probe = TestHooks::parse("landlock,keyring").apply(everything());
        assert_eq!(
            probe.landlock_abi,
            Err("removed by a test hook: AGENT_RUNTIME_TEST_DISABLE_LAYERS names landlock".into())
        );
        assert!(!probe.keyrings);
        assert!(probe.network.is_ok() && probe.rlimits.is_ok());
        assert!(probe.namespaces.is_ok() && probe.seccomp.is_ok());
    }

    #[test]
    fn a_hook_never_makes_a_missing_layer_available() {
        let mut missing = everything();
        missing.seccomp = Err("the kernel has no seccomp".into());
        let probe = TestHooks::parse("landlock").apply(missing);
        assert_eq!(probe.seccomp, Err("the kernel has no seccomp".into()));
    }

    #[test]
    fn doctor_says_what_was_removed_and_what_was_ignored() {
        assert_eq!(
            TestHooks::parse("").describe(),
            "test hooks: on in this build; AGENT_RUNTIME_TEST_DISABLE_LAYERS removes no layer"
        );
        assert_eq!(
            TestHooks::parse("landlock,mntns").describe(),
            "test hooks: on in this build; AGENT_RUNTIME_TEST_DISABLE_LAYERS removed landlock; \
             ignored mntns (removable: landlock, network, rlimits, namespaces, seccomp, keyring, agent_builtins)"
        );
    }
}
