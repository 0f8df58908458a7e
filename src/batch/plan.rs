//! The plan of a batch: which instances to enqueue, from manifests,
//! provider files, `--repeat`, `--family` and `--shard`. Pure.

use crate::agents::AgentSpec;
use crate::lifecycle::NewJob;
use crate::manifest::{Manifest, ProviderFile};
use crate::protocol::instance_id;

/// `--shard I/N`: the I-th of N stable parts (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard {text:?}: use I/N with 1 <= I <= N, e.g. 2/4");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether `job` (a manifest id) belongs to this shard. The partition
    /// depends only on the id (CRC32), so every shard of every run agrees.
    pub fn contains(&self, job: &str) -> bool {
        crc32fast::hash(job.as_bytes()) % self.count == self.index - 1
    }
}

/// What to plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct PlanOptions {
    pub providers: Vec<ProviderFile>,
    /// `--agent`: crossed with the providers; none keeps each manifest's
    /// own agent (or the runtime's loop).
    pub agents: Vec<AgentSpec>,
    pub repeat: u32,
    pub attempts: Option<u32>,
    pub family: Option<String>,
    pub shard: Option<Shard>,
}

/// One instance per manifest × provider × repeat, filtered by family and
/// shard, in manifest order.
pub(crate) fn plan(manifests: &[Manifest], options: &PlanOptions) -> Vec<NewJob> {
    let repeat = options.repeat.max(1);
    let mut out = Vec::new();
    for manifest in manifests {
        if options
            .family
            .as_deref()
            .is_some_and(|f| f != manifest.family)
        {
            continue;
        }
        if options.shard.is_some_and(|s| !s.contains(&manifest.id)) {
            continue;
        }
        let providers: Vec<Option<&ProviderFile>> = if options.providers.is_empty() {
            vec![None]
        } else {
            options.providers.iter().map(Some).collect()
        };
        let agents: Vec<Option<&AgentSpec>> = if options.agents.is_empty() {
            vec![None]
        } else {
            options.agents.iter().map(Some).collect()
        };
        for provider in providers {
            for agent in &agents {
                let mut instance = manifest.clone();
                if let Some(p) = provider {
                    // The file's provider, at the file's price (the
                    // manifest's price was for its own provider).
                    instance.provider = Some(p.provider.clone());
                    instance.price = p.price;
                }
                if let Some(file_agent) = provider.and_then(|p| p.agent.as_ref())
                    && agent.is_none()
                {
                    instance.agent = Some(file_agent.clone());
                }
                if let Some(spec) = agent {
                    // `--agent command` runs the manifest's own command.
                    let own = instance.agent.take();
                    instance.agent = spec.choice().map(|mut choice| {
                        if let Some(own) = own {
                            choice.command = own.command;
                            choice.verify_rounds = own.verify_rounds;
                            choice.memory = own.memory;
                        }
                        choice
                    });
                }
                // The stored job names the version it runs.
                if let Some(choice) = &mut instance.agent
                    && choice.version.is_none()
                    && let Ok(known) = crate::agents::lookup(&choice.name)
                {
                    choice.version = Some(known.default_version().to_string());
                }
                if let Some(attempts) = options.attempts {
                    instance.limits.attempts = attempts;
                }
                let name = provider.map(|p| p.name.as_str());
                // `--agent` names the instance: `+claude-code`, or
                // `+claude-code-contained` when it runs contained.
                let agent_name = agent
                    .and(instance.agent.as_ref())
                    .map(crate::protocol::AgentChoice::label);
                for k in 1..=repeat {
                    let k = (repeat > 1).then_some(k);
                    out.push(NewJob {
                        id: instance_id(&manifest.id, name, agent_name.as_deref(), k),
                        family: manifest.family.clone(),
                        max_attempts: instance.limits.attempts,
                        snapshot: instance.to_snapshot(),
                        hash: instance.hash(),
                        base_job: (name.is_some() || agent.is_some() || k.is_some())
                            .then(|| manifest.id.clone()),
                        provider: name.map(str::to_string),
                        repeat: k,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition_stably() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x", "1-2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let ids: Vec<String> = (0..200).map(|i| format!("job-{i}")).collect();
        let shards: Vec<Shard> = (1..=4).map(|i| Shard { index: i, count: 4 }).collect();
        for id in &ids {
            assert_eq!(
                shards.iter().filter(|s| s.contains(id)).count(),
                1,
                "{id} in exactly one shard"
            );
        }
        let sizes: Vec<usize> = shards
            .iter()
            .map(|s| ids.iter().filter(|id| s.contains(id)).count())
            .collect();
        assert!(sizes.iter().all(|&n| n > 25), "unbalanced: {sizes:?}");
        // The partition is part of the contract: it must never change.
        assert!(Shard { index: 1, count: 1 }.contains("anything"));
        assert_eq!(crc32fast::hash(b"off_by_one") % 4, 3);
    }
}
