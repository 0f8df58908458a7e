//! `agents`: the table of external agents and, for a data dir, what is
//! installed in it; `agents install`: installing ahead of a batch.

use std::path::Path;

use super::exit::Completion;
use crate::agents::{AgentSpec, Mode, install, installed, table};
use crate::lifecycle::DataDir;
use crate::table::{Column, Table};

pub(super) fn list(data: Option<&Path>) -> anyhow::Result<Completion> {
    let found = data.map(|d| installed(&DataDir::new(d).cache().join("agents")));
    let mut rows = Table::new(vec![
        Column::new("AGENT"),
        Column::new("PACKAGE").drop_at(3),
        Column::new("PINNED").drop_at(4),
        Column::new("API").drop_at(2),
        Column::new("MODES").drop_at(1),
        Column::new("INSTALLED"),
    ]);
    for agent in table() {
        let modes: Vec<&str> = agent.modes().iter().map(|m: &Mode| m.as_str()).collect();
        let here: Vec<String> = found
            .iter()
            .flatten()
            .filter(|i| i.name == agent.name())
            .map(|i| i.version.clone())
            .collect();
        let installed = match (&found, agent.package().name()) {
            (_, None) => "(argv in the manifest)".to_string(),
            (None, _) => "-".to_string(),
            (Some(_), _) if here.is_empty() => "no".to_string(),
            (Some(_), _) => here.join(", "),
        };
        let dialect: &str = agent.dialect().into();
        rows.push([
            agent.name().to_string(),
            agent.package().name().unwrap_or("-").to_string(),
            non_empty(agent.default_version()),
            dialect.to_string(),
            modes.join(", "),
            installed,
        ]);
    }
    out!("{}", rows.render(super::status::table_width()));
    if data.is_none() {
        outln!(
            "Give a data dir to see what is installed in it; `agents install DATA NAME[@VERSION]` installs."
        );
    }
    Ok(Completion::Success)
}

fn non_empty(text: &str) -> String {
    if text.is_empty() {
        "-".into()
    } else {
        text.into()
    }
}

pub(super) fn install_agents(data: &Path, specs: &[String]) -> anyhow::Result<Completion> {
    let specs = specs
        .iter()
        .map(|s| s.parse::<AgentSpec>())
        .collect::<Result<Vec<_>, _>>()?;
    let dir = DataDir::new(data).cache().join("agents");
    for spec in &specs {
        let (record, fresh) = install(&dir, spec, &mut |line| errln!("{line}"))?;
        let what = if fresh {
            "installed"
        } else {
            "already installed"
        };
        outln!(
            "{}@{}: {what} in {} (digest {})",
            record.name,
            record.version,
            crate::escape::line(&record.dir.display().to_string()),
            record.digest
        );
    }
    Ok(Completion::Success)
}
