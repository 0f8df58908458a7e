//! The name of a layer a command ran under, as the log, `exec` and `doctor`
//! write it (`landlock-abi7`, `pidns`, `cgroup-v2`, ...).

use std::fmt;
use std::str::FromStr;

/// One layer of a command's sandbox, or how it was started.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layer {
    CgroupV1,
    CgroupV2,
    /// Landlock, at this ABI.
    Landlock(i32),
    /// Landlock's TCP rules, standing in for a network namespace.
    LandlockTcp,
    Pidns,
    Mntns,
    Netns,
    /// A network namespace inside a user namespace of its own.
    UserNetns,
    Rlimits,
    /// The address-space rlimit, standing in for a cgroup's memory limit.
    RlimitAs,
    /// The process-count rlimit, standing in for a cgroup's task limit.
    RlimitNproc,
    Nocaps,
    Keyring,
    Seccomp,
    /// Started by the attempt's zygote.
    Zygote,
    /// The zygote was lost; started by a plain spawn instead.
    ZygoteLost,
    /// A name this version does not know (a log another version wrote).
    Unknown(String),
}

impl Layer {
    /// The fixed names, in the order [`Layer::name`] matches them.
    const NAMES: [(&'static str, Layer); 15] = [
        ("cgroup-v1", Layer::CgroupV1),
        ("cgroup-v2", Layer::CgroupV2),
        ("landlock-tcp", Layer::LandlockTcp),
        ("pidns", Layer::Pidns),
        ("mntns", Layer::Mntns),
        ("netns", Layer::Netns),
        ("userns+netns", Layer::UserNetns),
        ("rlimits", Layer::Rlimits),
        ("rlimit-as", Layer::RlimitAs),
        ("rlimit-nproc", Layer::RlimitNproc),
        ("nocaps", Layer::Nocaps),
        ("keyring", Layer::Keyring),
        ("seccomp", Layer::Seccomp),
        ("zygote", Layer::Zygote),
        ("zygote-lost", Layer::ZygoteLost),
    ];
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layer::Landlock(abi) => write!(f, "landlock-abi{abi}"),
            Layer::Unknown(name) => f.write_str(name),
            known => {
                let name = Layer::NAMES
                    .iter()
                    .find(|(_, layer)| layer == known)
                    .map_or("unknown", |(name, _)| name);
                f.write_str(name)
            }
        }
    }
}

impl FromStr for Layer {
    type Err = std::convert::Infallible;

    fn from_str(name: &str) -> Result<Layer, Self::Err> {
        if let Some((_, layer)) = Layer::NAMES.iter().find(|(n, _)| *n == name) {
            return Ok(layer.clone());
        }
        Ok(match name.strip_prefix("landlock-abi").map(str::parse) {
            Some(Ok(abi)) => Layer::Landlock(abi),
            _ => Layer::Unknown(name.to_string()),
        })
    }
}

impl PartialEq<str> for Layer {
    fn eq(&self, name: &str) -> bool {
        let Ok(named) = name.parse::<Layer>();
        *self == named
    }
}

impl PartialEq<&str> for Layer {
    fn eq(&self, name: &&str) -> bool {
        self == *name
    }
}

impl serde::Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Layer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Layer, D::Error> {
        let name = String::deserialize(deserializer)?;
        let Ok(layer) = name.parse();
        Ok(layer)
    }
}

/// The layers' names joined by `,` (`exec`'s `sandbox=` line).
pub fn joined(layers: &[Layer]) -> String {
    layers
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_layer() {
        let mut all: Vec<Layer> = Layer::NAMES.iter().map(|(_, l)| l.clone()).collect();
        all.push(Layer::Landlock(7));
        for layer in all {
            let name = layer.to_string();
            assert_eq!(name.parse::<Layer>().ok(), Some(layer.clone()), "{name}");
            // Written as its name, and read back from it.
            let packed = rmp_serde::to_vec(&layer).unwrap();
            assert_eq!(packed, rmp_serde::to_vec(&name).unwrap());
            assert_eq!(rmp_serde::from_slice::<Layer>(&packed).unwrap(), layer);
        }
    }

    #[test]
    fn an_unknown_name_is_kept_as_written() {
        for name in ["landlock-abiX", "gvisor", ""] {
            let layer: Layer = name.parse().unwrap();
            assert_eq!(layer, Layer::Unknown(name.to_string()));
            assert_eq!(layer.to_string(), name);
        }
    }
}
