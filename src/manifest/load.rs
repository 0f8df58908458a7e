//! Reading a job manifest: TOML text to a validated [`Manifest`], with every
//! refusal placed at `file:line:column` and named by its field.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::ManifestError;
use super::fields::Fields;
use super::provider_config::build_provider;
use super::raw::{RawAcceptance, RawLimits, RawManifest, RawOracle, RawSetup};
use super::source_map::SourceMap;
use crate::protocol::{
    Acceptance, Baseline, CACHE_PLACEHOLDER, Limits, MAX_PROCESSES, MIN_MEMORY, Manifest, Oracle,
    Origin, ResultsFormat, Sandbox, Setup, validate_id,
};

/// Reads and validates the manifest at `path`. Errors name `path` as given.
pub fn load_manifest(path: &Path) -> Result<Manifest, ManifestError> {
    let text = read_text(path)?;
    parse_manifest(path, &text)
}

/// Validates manifest `text` as if read from `path` (relative paths in it
/// are resolved against `path`'s directory, which must exist).
pub fn parse_manifest(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
    let map = SourceMap::parse(path, text)?;
    let raw: RawManifest = toml::from_str(text).map_err(|e| map.toml_error(&e))?;
    let mut fields = Fields::new(&map, path)?;
    let manifest = build(&mut fields, path, raw)?;
    Ok(manifest)
}

pub(super) fn read_text(path: &Path) -> Result<String, ManifestError> {
    std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn build(
    fields: &mut Fields<'_>,
    path: &Path,
    raw: RawManifest,
) -> Result<Manifest, ManifestError> {
    let id = match raw.id {
        Some(id) => {
            validate_id(&id).map_err(|e| fields.err("id", e.to_string()))?;
            id
        }
        None => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            validate_id(&stem).map_err(|e| {
                fields.err(
                    "id",
                    format!("not set, and the file name cannot be used instead: {e}"),
                )
            })?;
            stem
        }
    };
    let family = match raw.family {
        Some(family) => {
            validate_id(&family)
                .map_err(|e| fields.err("family", e.to_string().replace("job id", "family")))?;
            family
        }
        None => id.clone(),
    };
    let (prompt, prompt_file) = prompt(fields, raw.prompt, raw.prompt_file)?;
    let source_text = fields.required("source", raw.source)?;
    let source = fields.existing_dir("source", &source_text)?;
    let editable = fields.globs("editable", raw.editable)?;
    let allow = fields.allow_rules(raw.allow)?;
    let verify = fields.argv("verify", raw.verify)?;
    fields.remember("verify");
    fields.remember("allow");
    let env = raw.env.unwrap_or_default();
    for (name, value) in &env {
        let field = format!("env.{name}");
        fields.env_name(&field, name)?;
        if value.contains('\0') {
            return Err(fields.err(&field, "value contains a NUL byte"));
        }
    }
    fields.remember("acceptance.test_timeout");
    fields.remember("acceptance.fail_to_pass");
    fields.remember("acceptance.canary");
    fields.remember("acceptance.strict_integrity");
    let acceptance = match raw.acceptance {
        Some(raw) => Some(acceptance(fields, raw, &source)?),
        None => None,
    };
    let setup = match raw.setup {
        Some(raw) => Some(setup(fields, raw)?),
        None => None,
    };
    if setup.is_none()
        && let Some(name) = env
            .iter()
            .find(|(_, v)| v.contains(CACHE_PLACEHOLDER))
            .map(|(k, _)| k)
    {
        return Err(fields.err(
            &format!("env.{name}"),
            format!("{CACHE_PLACEHOLDER} names the job cache, which only a job with [setup] has"),
        ));
    }
    let limits = limits(fields, raw.limits.unwrap_or_default())?;
    let provider = match raw.provider {
        Some(raw) => Some(build_provider(fields, "provider", raw)?),
        None => None,
    };
    let price = match raw.price {
        Some(raw) => Some(super::price::price(fields, raw)?),
        None => None,
    };
    let oracle = match raw.oracle {
        Some(raw) => Some(oracle(fields, raw, &source)?),
        None => None,
    };
    let sandbox = raw.sandbox.unwrap_or_default();
    let toolchains = super::toolchains::toolchains(
        fields,
        sandbox.toolchains.unwrap_or_default(),
        &super::toolchains::Confined {
            source: &source,
            acceptance: acceptance.as_ref().map(|a| a.dir.as_path()),
            oracle: oracle.as_ref().map(Oracle::path),
            has_setup: setup.is_some(),
        },
    )?;
    let sandbox = Sandbox {
        mode: sandbox.mode.unwrap_or_default(),
        network: sandbox.network.unwrap_or(false),
        toolchains,
    };
    Ok(Manifest {
        id,
        family,
        prompt,
        prompt_file,
        source,
        editable,
        allow,
        verify,
        trace: raw.trace.unwrap_or_default(),
        env,
        acceptance,
        setup,
        limits,
        provider,
        price,
        sandbox,
        metadata: raw.metadata.unwrap_or_default(),
        oracle,
        origin: Origin {
            file: path.to_path_buf(),
            fields: std::mem::take(&mut fields.seen)
                .into_iter()
                .map(|(field, at)| (field, (at.line, at.column)))
                .collect(),
        },
    })
}

fn prompt(
    fields: &Fields<'_>,
    inline: Option<String>,
    file: Option<String>,
) -> Result<(String, Option<PathBuf>), ManifestError> {
    match (inline, file) {
        (Some(_), Some(_)) => {
            Err(fields.key_err("prompt_file", "set either prompt or prompt_file, not both"))
        }
        (None, None) => Err(fields.err("prompt", "required key is missing (or set prompt_file)")),
        (Some(text), None) => {
            if text.trim().is_empty() {
                return Err(fields.err("prompt", "must not be empty"));
            }
            Ok((text, None))
        }
        (None, Some(file)) => {
            let path = fields.existing_file("prompt_file", &file)?;
            let bytes = std::fs::read(&path).map_err(|e| {
                fields.err(
                    "prompt_file",
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            let text = String::from_utf8(bytes).map_err(|_| {
                fields.err(
                    "prompt_file",
                    format!("{} is not UTF-8 text", path.display()),
                )
            })?;
            if text.trim().is_empty() {
                return Err(fields.err("prompt_file", format!("{} is empty", path.display())));
            }
            Ok((text, Some(path)))
        }
    }
}

fn acceptance(
    fields: &Fields<'_>,
    raw: RawAcceptance,
    source: &Path,
) -> Result<Acceptance, ManifestError> {
    let dir_text = fields.required("acceptance.dir", raw.dir)?;
    let dir = fields.existing_dir("acceptance.dir", &dir_text)?;
    if dir.starts_with(source) {
        return Err(fields.err(
            "acceptance.dir",
            format!(
                "{} is inside source {}; the model could read the hidden tests",
                dir.display(),
                source.display()
            ),
        ));
    }
    let results = match raw.results {
        Some(text) => Some(
            text.parse::<ResultsFormat>()
                .map_err(|message| fields.err("acceptance.results", message))?,
        ),
        None => None,
    };
    let test_timeout = match &raw.test_timeout {
        Some(value) => {
            Some(fields.duration("acceptance.test_timeout", Some(value), Duration::ZERO)?)
        }
        None => None,
    };
    let fail_to_pass = raw.fail_to_pass.unwrap_or_default();
    let pass_to_pass = raw.pass_to_pass.unwrap_or_default();
    if !pass_to_pass.is_empty() && fail_to_pass.is_empty() {
        return Err(fields.err(
            "acceptance.pass_to_pass",
            "needs fail_to_pass: an explicit inventory names the tests a fix must make pass",
        ));
    }
    let acceptance = Acceptance {
        dir,
        command: fields.argv("acceptance.command", raw.command)?,
        baseline: raw.baseline.unwrap_or_default(),
        results,
        test_timeout,
        fail_to_pass,
        pass_to_pass,
        canary: raw.canary.unwrap_or(true),
        strict_integrity: raw.strict_integrity.unwrap_or(false),
    };
    if acceptance.has_explicit_inventory() {
        if acceptance.results_format() == ResultsFormat::Exit {
            return Err(fields.err(
                "acceptance.fail_to_pass",
                "needs per-test results (results = \"libtest\" or \"junit:PATH\"), not the exit status",
            ));
        }
        if acceptance.baseline == Baseline::Skip {
            return Err(fields.err(
                "acceptance.fail_to_pass",
                "the baseline must run (baseline = \"must_fail\") to agree with an explicit inventory",
            ));
        }
        let names = acceptance
            .fail_to_pass
            .iter()
            .chain(&acceptance.pass_to_pass);
        if let Some(bad) = names
            .clone()
            .find(|n| n.trim().is_empty() || n.contains('\n'))
        {
            return Err(fields.err(
                "acceptance.fail_to_pass",
                format!("{bad:?} is not a test name"),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = names.into_iter().find(|n| !seen.insert(n.as_str())) {
            return Err(fields.err(
                "acceptance.fail_to_pass",
                format!("{twice:?} is named twice in fail_to_pass and pass_to_pass"),
            ));
        }
    }
    Ok(acceptance)
}

fn oracle(fields: &Fields<'_>, raw: RawOracle, source: &Path) -> Result<Oracle, ManifestError> {
    let (field, text, make): (_, _, fn(PathBuf) -> Oracle) = match (raw.script, raw.patch) {
        (Some(_), Some(_)) => {
            return Err(fields.err("oracle.patch", "set either script or patch, not both"));
        }
        (Some(text), None) => ("oracle.script", text, Oracle::Script),
        (None, Some(text)) => ("oracle.patch", text, Oracle::Patch),
        (None, None) => {
            return Err(fields.key_err("oracle", "needs script = FILE or patch = FILE"));
        }
    };
    let path = fields.existing_file(field, &text)?;
    if path.starts_with(source) {
        return Err(fields.err(
            field,
            format!(
                "{} is inside source {}; the model could read the fix",
                path.display(),
                source.display()
            ),
        ));
    }
    Ok(make(path))
}

/// `[setup]`: a non-empty list of commands, each a non-empty argv whose
/// program is a name (the executor resolves it on the fixed search path).
fn setup(fields: &Fields<'_>, raw: RawSetup) -> Result<Setup, ManifestError> {
    let commands = fields.required("setup.commands", raw.commands)?;
    if commands.is_empty() {
        return Err(fields.err(
            "setup.commands",
            "must list at least one command, e.g. [[\"cargo\", \"fetch\"]]",
        ));
    }
    for (index, argv) in commands.iter().enumerate() {
        let field = format!("setup.commands[{index}]");
        let argv = fields.argv(&field, Some(argv.clone()))?;
        let program = argv.first().map(String::as_str).unwrap_or_default();
        if program.contains('/') || program.contains(CACHE_PLACEHOLDER) {
            return Err(fields.err(
                &field,
                format!("{program:?} must be a program name, not a path"),
            ));
        }
        if let Some(arg) = argv.iter().find(|a| a.contains('\0')) {
            return Err(fields.err(&field, format!("{arg:?} contains a NUL byte")));
        }
    }
    let inputs = raw.inputs.unwrap_or_default();
    for (index, glob) in inputs.iter().enumerate() {
        let field = format!("setup.inputs[{index}]");
        if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
            return Err(fields.err(
                &field,
                format!("{glob:?} must be relative to the source, without '..'"),
            ));
        }
        if let Err(e) = globset::Glob::new(glob) {
            return Err(fields.err(&field, format!("invalid glob {glob:?}: {e}")));
        }
    }
    Ok(Setup {
        commands,
        network: raw.network.unwrap_or(true),
        inputs,
    })
}

fn limits(fields: &Fields<'_>, raw: RawLimits) -> Result<Limits, ManifestError> {
    let d = Limits::default();
    let attempts = fields.positive("limits.attempts", raw.attempts, d.attempts)?;
    if attempts > 100 {
        return Err(fields.err("limits.attempts", "must be at most 100"));
    }
    let memory = fields.size("limits.memory", raw.memory.as_ref(), d.memory)?;
    if memory < MIN_MEMORY {
        return Err(fields.err(
            "limits.memory",
            format!("must be at least {MIN_MEMORY} (no program runs in less)"),
        ));
    }
    let processes = fields.positive("limits.processes", raw.processes, d.processes)?;
    if processes > MAX_PROCESSES {
        return Err(fields.err(
            "limits.processes",
            format!("must be at most {MAX_PROCESSES} (the kernel's largest process id)"),
        ));
    }
    Ok(Limits {
        attempts,
        max_steps: fields.positive("limits.max_steps", raw.max_steps, d.max_steps)?,
        max_invalid: fields.positive("limits.max_invalid", raw.max_invalid, d.max_invalid)?,
        wall_time: fields.duration("limits.wall_time", raw.wall_time.as_ref(), d.wall_time)?,
        command_timeout: fields.duration(
            "limits.command_timeout",
            raw.command_timeout.as_ref(),
            d.command_timeout,
        )?,
        output_cap: fields.size("limits.output_cap", raw.output_cap.as_ref(), d.output_cap)?,
        observation_cap: fields.size(
            "limits.observation_cap",
            raw.observation_cap.as_ref(),
            d.observation_cap,
        )?,
        token_budget: fields.positive("limits.token_budget", raw.token_budget, d.token_budget)?,
        memory,
        processes,
        // Zero is allowed: the first fault of the infrastructure ends the job.
        max_restarts: raw.max_restarts.unwrap_or(d.max_restarts),
    })
}
