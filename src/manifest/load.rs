//! Reading a job manifest: TOML text to a validated [`Manifest`], with every
//! refusal placed at `file:line:column` and named by its field, and every
//! refusal of a file reported, not only the first.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::ManifestError;
use super::fields::Fields;
use super::load_shape::{ShapeErrors, check_shape, not_a_manifest, prune};
use super::provider_config::build_provider;
use super::raw::{RawAcceptance, RawLimits, RawManifest, RawOracle, RawSetup};
use super::shape::MANIFEST;
use super::source_map::SourceMap;
use super::suggest::did_you_mean;
use crate::protocol::{
    Acceptance, AgentChoice, Baseline, CACHE_PLACEHOLDER, Limits, MAX_PROCESSES, MIN_MEMORY,
    Manifest, Oracle, Origin, ResultsFormat, Sandbox, Setup, Waiver, validate_id,
};

/// Reads and validates the manifest at `path`. Errors name `path` as given.
pub(crate) fn load_manifest(path: &Path) -> Result<Manifest, ManifestError> {
    let text = read_text(path)?;
    parse_manifest(path, &text)
}

/// Validates manifest `text` as if read from `path` (relative paths in it
/// are resolved against `path`'s directory, which must exist). Every error
/// of a file that parses as TOML is reported, in file order.
pub(crate) fn parse_manifest(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
    let map = SourceMap::parse(path, text)?;
    let mut root: toml::Table = toml::from_str(text).map_err(|e| map.toml_error(&e))?;
    if let Some(err) = not_a_manifest(path, &root) {
        return Err(err);
    }
    let shape = check_shape(&map, &root, &MANIFEST);
    prune(&mut root, &shape.fields);
    let mut errors = Errors::new(shape);
    let raw: RawManifest = match toml::Value::Table(root).try_into() {
        Ok(raw) => raw,
        Err(e) => {
            errors.push(map.toml_error(&e));
            return errors.finish(None);
        }
    };
    let mut fields = Fields::new(&map, path)?;
    let manifest = build(&mut fields, &mut errors, path, raw);
    errors.finish(manifest)
}

pub(super) fn read_text(path: &Path) -> Result<String, ManifestError> {
    std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The errors of one file so far. Checks go on past an error so that one
/// run names them all; an error about a field the shape check already
/// reported (and took out) is not said twice.
pub(super) struct Errors {
    list: Vec<ManifestError>,
    reported: Vec<String>,
    /// Keys a misspelt one was taken for: "missing" is already said.
    suggested: Vec<String>,
}

impl Errors {
    pub(super) fn new(shape: ShapeErrors) -> Errors {
        let reported = shape
            .fields
            .iter()
            .map(|f| f.split('[').next().unwrap_or(f).to_string())
            .collect();
        Errors {
            list: shape.errors,
            reported,
            suggested: shape.suggested,
        }
    }

    pub(super) fn push(&mut self, error: ManifestError) {
        let covered = error.field().is_some_and(|field| {
            self.reported.iter().any(|r| {
                field == r
                    || field
                        .strip_prefix(r.as_str())
                        .is_some_and(|rest| rest.starts_with(['.', '[']))
            })
        });
        let misspelt = matches!(
            &error,
            ManifestError::Field { field, message, .. }
                if message.starts_with("required key is missing") && self.suggested.contains(field)
        );
        if !covered && !misspelt {
            self.list.push(error);
        }
    }

    /// The value, or `None` with its error kept.
    pub(super) fn keep<T>(&mut self, result: Result<T, ManifestError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.push(error);
                None
            }
        }
    }

    /// The value when no error was found, else every error in file order.
    pub(super) fn finish<T>(self, value: Option<T>) -> Result<T, ManifestError> {
        match (ManifestError::all(self.list), value) {
            (Some(error), _) => Err(error),
            (None, Some(value)) => Ok(value),
            // A check gave no value and no reason: never expected.
            (None, None) => Err(ManifestError::Snapshot(
                "the manifest could not be read (no error was recorded)".to_string(),
            )),
        }
    }
}

fn build(
    fields: &mut Fields<'_>,
    errors: &mut Errors,
    path: &Path,
    raw: RawManifest,
) -> Option<Manifest> {
    let id = errors.keep(job_id(fields, path, raw.id));
    let family = match raw.family {
        Some(family) => errors.keep(
            validate_id(&family)
                .map(|()| family)
                .map_err(|e| fields.err("family", e.to_string().replace("job id", "family"))),
        ),
        None => id.clone(),
    };
    let prompt = errors.keep(prompt(fields, raw.prompt, raw.prompt_file));
    let source = errors
        .keep(fields.required("source", raw.source))
        .and_then(|text| errors.keep(fields.existing_dir("source", &text)));
    let editable = errors.keep(fields.globs("editable", raw.editable));
    let allow = errors.keep(fields.allow_rules(raw.allow));
    let verify = errors.keep(fields.argv("verify", raw.verify));
    fields.remember("verify");
    fields.remember("allow");
    let env = raw.env.unwrap_or_default();
    for (name, value) in &env {
        let field = format!("env.{name}");
        errors.keep(fields.env_name(&field, name));
        if value.contains('\0') {
            errors.push(fields.err(&field, "value contains a NUL byte"));
        }
    }
    fields.remember("acceptance.test_timeout");
    fields.remember("acceptance.fail_to_pass");
    fields.remember("acceptance.canary");
    fields.remember("acceptance.twins");
    fields.remember("acceptance.plugins");
    fields.remember("acceptance.strict_integrity");
    let acceptance = match raw.acceptance {
        Some(raw) => acceptance(fields, errors, raw, source.as_deref()).map(Some),
        None => Some(None),
    };
    let has_setup = raw.setup.is_some();
    let setup = match raw.setup {
        Some(raw) => setup(fields, errors, raw).map(Some),
        None => Some(None),
    };
    if !has_setup
        && let Some(name) = env
            .iter()
            .find(|(_, v)| v.contains(CACHE_PLACEHOLDER))
            .map(|(k, _)| k)
    {
        errors.push(fields.err(
            &format!("env.{name}"),
            format!("{CACHE_PLACEHOLDER} names the job cache, which only a job with [setup] has"),
        ));
    }
    let limits = limits(fields, errors, raw.limits.unwrap_or_default());
    let provider = match raw.provider {
        Some(raw) => errors
            .keep(build_provider(fields, "provider", raw))
            .map(Some),
        None => Some(None),
    };
    let price = match raw.price {
        Some(raw) => errors.keep(super::price::price(fields, raw)).map(Some),
        None => Some(None),
    };
    let oracle = match raw.oracle {
        Some(raw) => errors
            .keep(oracle(fields, raw, source.as_deref()))
            .map(Some),
        None => Some(None),
    };
    let waive = match raw.check.and_then(|c| c.waive) {
        Some(names) => errors.keep(waivers(fields, &names)),
        None => Some(Vec::new()),
    };
    let sandbox = raw.sandbox.unwrap_or_default();
    // Where toolchains may not lie depends on the source, the hidden tests
    // and the oracle; while one of those is refused (and reported), the
    // toolchains wait for the next run.
    let toolchains = match (&source, &acceptance, &oracle) {
        (Some(source), Some(acceptance), Some(oracle)) => {
            errors.keep(super::toolchains::toolchains(
                fields,
                sandbox.toolchains.unwrap_or_default(),
                &super::toolchains::Confined {
                    source,
                    acceptance: acceptance.as_ref().map(|a| a.dir.as_path()),
                    oracle: oracle.as_ref().map(Oracle::path),
                    has_setup,
                },
            ))
        }
        _ => None,
    };
    let (
        Some(id),
        Some(family),
        Some((prompt, prompt_file)),
        Some(source),
        Some(editable),
        Some(allow),
        Some(verify),
        Some(acceptance),
        Some(setup),
        Some(limits),
        Some(provider),
        Some(price),
        Some(oracle),
        Some(waive),
        Some(toolchains),
    ) = (
        id, family, prompt, source, editable, allow, verify, acceptance, setup, limits, provider,
        price, oracle, waive, toolchains,
    )
    else {
        return None;
    };
    let sandbox = Sandbox {
        mode: sandbox.mode.unwrap_or_default(),
        network: sandbox.network.unwrap_or(false),
        toolchains,
    };
    let agent = match raw.agent {
        Some(agent) => errors.keep(agent_choice(fields, agent))?,
        None => None,
    };
    Some(Manifest {
        agent,
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
        waive,
        origin: Origin {
            file: path.to_path_buf(),
            fields: std::mem::take(&mut fields.seen)
                .into_iter()
                .map(|(field, at)| (field, (at.line, at.column)))
                .collect(),
        },
    })
}

/// `[agent]`: a name of the table (`runtime` is the built-in loop, the
/// same as no `[agent]`), a version, a mode.
pub(super) fn agent_choice(
    fields: &Fields<'_>,
    raw: super::raw::RawAgent,
) -> Result<Option<AgentChoice>, ManifestError> {
    let Some(name) = raw.name else {
        return Err(fields.err("agent.name", "missing: which agent drives the job"));
    };
    if !crate::protocol::AGENT_NAMES.contains(&name.as_str()) {
        return Err(fields.err(
            "agent.name",
            format!(
                "unknown agent `{name}` (known: {})",
                crate::protocol::AGENT_NAMES.join(", ")
            ),
        ));
    }
    if let Some(version) = &raw.version
        && (version.is_empty()
            || !version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c)))
    {
        return Err(fields.err("agent.version", format!("not a version: {version:?}")));
    }
    let memory = match raw.memory.as_ref() {
        None => None,
        Some(value) => {
            let size = fields.size("agent.memory", Some(value), MIN_MEMORY)?;
            if size < MIN_MEMORY {
                return Err(fields.err(
                    "agent.memory",
                    format!("must be at least {MIN_MEMORY} (no program runs in less)"),
                ));
            }
            Some(size.bytes())
        }
    };
    let command = raw.command.unwrap_or_default();
    match (name.as_str(), command.first()) {
        ("command", None) => {
            return Err(fields.err(
                "agent.command",
                "missing: the `command` agent runs the program it names",
            ));
        }
        ("command", Some(program)) if program.contains('/') => {
            let path = fields.path(program);
            let found = path
                .canonicalize()
                .map_err(|e| fields.err("agent.command", format!("{}: {e}", path.display())))?;
            let mut command = command.clone();
            command[0] = found.display().to_string();
            return Ok(Some(AgentChoice {
                name,
                version: raw.version,
                mode: raw.mode.unwrap_or_default(),
                command,
                verify_rounds: raw.verify_rounds,
                memory,
            }));
        }
        ("command", Some(_)) => {}
        (_, Some(_)) => {
            return Err(fields.err(
                "agent.command",
                format!("only the `command` agent takes a command; `{name}` is launched as the table says"),
            ));
        }
        _ => {}
    }
    if name == "runtime" {
        return Ok(None);
    }
    Ok(Some(AgentChoice {
        name,
        version: raw.version,
        mode: raw.mode.unwrap_or_default(),
        command,
        verify_rounds: raw.verify_rounds,
        memory,
    }))
}

/// The id: the `id` key, or the file stem.
fn job_id(fields: &Fields<'_>, path: &Path, id: Option<String>) -> Result<String, ManifestError> {
    match id {
        Some(id) => {
            validate_id(&id).map_err(|e| fields.err("id", e.to_string()))?;
            Ok(id)
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
            Ok(stem)
        }
    }
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
    errors: &mut Errors,
    raw: RawAcceptance,
    source: Option<&Path>,
) -> Option<Acceptance> {
    let dir = errors
        .keep(fields.required("acceptance.dir", raw.dir))
        .and_then(|text| errors.keep(fields.existing_dir("acceptance.dir", &text)));
    if let (Some(dir), Some(source)) = (&dir, source)
        && dir.starts_with(source)
    {
        errors.push(fields.err(
            "acceptance.dir",
            format!(
                "{} is inside source {}; the model could read the hidden tests",
                dir.display(),
                source.display()
            ),
        ));
    }
    let results = match raw.results {
        Some(text) => errors
            .keep(text.parse::<ResultsFormat>().map_err(|message| {
                let near = did_you_mean(&text, ["libtest", "exit", "junit:PATH"]);
                let message = match near {
                    Some(near) if !text.starts_with("junit:") => {
                        format!("{message}; did you mean \"{near}\"?")
                    }
                    _ => message.to_string(),
                };
                fields.err("acceptance.results", message)
            }))
            .map(Some),
        None => Some(None),
    };
    let test_timeout = match &raw.test_timeout {
        Some(value) => errors
            .keep(fields.duration("acceptance.test_timeout", Some(value), Duration::ZERO))
            .map(Some),
        None => Some(None),
    };
    let command = errors.keep(fields.argv("acceptance.command", raw.command));
    let fail_to_pass = raw.fail_to_pass.unwrap_or_default();
    let pass_to_pass = raw.pass_to_pass.unwrap_or_default();
    if !pass_to_pass.is_empty() && fail_to_pass.is_empty() {
        errors.push(fields.err(
            "acceptance.pass_to_pass",
            "needs fail_to_pass: an explicit inventory names the tests a fix must make pass",
        ));
        return None;
    }
    let acceptance = Acceptance {
        dir: dir?,
        command: command?,
        baseline: raw.baseline.unwrap_or_default(),
        results: results?,
        test_timeout: test_timeout?,
        fail_to_pass,
        pass_to_pass,
        flaky: raw.flaky.unwrap_or_default(),
        canary: raw.canary.unwrap_or(true),
        twins: raw.twins.unwrap_or(true),
        plugins: raw.plugins.unwrap_or_default(),
        strict_integrity: raw.strict_integrity.unwrap_or(false),
    };
    if acceptance.has_explicit_inventory() {
        if acceptance.results_format() == ResultsFormat::Exit {
            errors.push(fields.err(
                "acceptance.fail_to_pass",
                "needs per-test results (results = \"libtest\" or \"junit:PATH\"), not the exit status",
            ));
            return None;
        }
        if acceptance.baseline == Baseline::Skip {
            errors.push(fields.err(
                "acceptance.fail_to_pass",
                "the baseline must run (baseline = \"must_fail\") to agree with an explicit inventory",
            ));
            return None;
        }
        let names = acceptance
            .fail_to_pass
            .iter()
            .chain(&acceptance.pass_to_pass);
        if let Some(bad) = names
            .clone()
            .find(|n| n.trim().is_empty() || n.contains('\n'))
        {
            errors.push(fields.err(
                "acceptance.fail_to_pass",
                format!("{bad:?} is not a test name"),
            ));
            return None;
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = names.into_iter().find(|n| !seen.insert(n.as_str())) {
            errors.push(fields.err(
                "acceptance.fail_to_pass",
                format!("{twice:?} is named twice in fail_to_pass and pass_to_pass"),
            ));
            return None;
        }
    }
    Some(acceptance)
}

/// `[check] waive`: each name a [`Waiver`], distinct, in order.
fn waivers(fields: &Fields<'_>, names: &[String]) -> Result<Vec<Waiver>, ManifestError> {
    let mut waive = Vec::new();
    for name in names {
        let Ok(waiver) = name.parse::<Waiver>() else {
            let hint = did_you_mean(name, Waiver::names())
                .map(|w| format!(" (did you mean `{w}`?)"))
                .unwrap_or_default();
            return Err(fields.err(
                "check.waive",
                format!(
                    "`{name}` is not a finding check can waive{hint}; one of: {}",
                    Waiver::names().join(", ")
                ),
            ));
        };
        if !waive.contains(&waiver) {
            waive.push(waiver);
        }
    }
    Ok(waive)
}

fn oracle(
    fields: &Fields<'_>,
    raw: RawOracle,
    source: Option<&Path>,
) -> Result<Oracle, ManifestError> {
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
    if let Some(source) = source
        && path.starts_with(source)
    {
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
fn setup(fields: &Fields<'_>, errors: &mut Errors, raw: RawSetup) -> Option<Setup> {
    let commands = errors.keep(fields.required("setup.commands", raw.commands))?;
    if commands.is_empty() {
        errors.push(fields.err(
            "setup.commands",
            "must list at least one command, e.g. [[\"cargo\", \"fetch\"]]",
        ));
        return None;
    }
    let mut ok = true;
    for (index, argv) in commands.iter().enumerate() {
        let field = format!("setup.commands[{index}]");
        let Some(argv) = errors.keep(fields.argv(&field, Some(argv.clone()))) else {
            ok = false;
            continue;
        };
        let program = argv.first().map(String::as_str).unwrap_or_default();
        if program.contains('/') || program.contains(CACHE_PLACEHOLDER) {
            errors.push(fields.err(
                &field,
                format!("{program:?} must be a program name, not a path"),
            ));
            ok = false;
        }
        if let Some(arg) = argv.iter().find(|a| a.contains('\0')) {
            errors.push(fields.err(&field, format!("{arg:?} contains a NUL byte")));
            ok = false;
        }
    }
    let inputs = raw.inputs.unwrap_or_default();
    for (index, glob) in inputs.iter().enumerate() {
        let field = format!("setup.inputs[{index}]");
        if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
            errors.push(fields.err(
                &field,
                format!("{glob:?} must be relative to the source, without '..'"),
            ));
            ok = false;
        } else if let Err(e) = globset::Glob::new(glob) {
            errors.push(fields.err(&field, format!("invalid glob {glob:?}: {e}")));
            ok = false;
        }
    }
    ok.then(|| Setup {
        commands,
        network: raw.network.unwrap_or(true),
        inputs,
    })
}

/// `[limits]`, every key checked.
fn limits(fields: &Fields<'_>, errors: &mut Errors, raw: RawLimits) -> Option<Limits> {
    let d = Limits::default();
    let attempts = errors
        .keep(fields.positive("limits.attempts", raw.attempts, d.attempts))
        .and_then(|n| {
            if n > 100 {
                errors.push(fields.err("limits.attempts", "must be at most 100"));
                None
            } else {
                Some(n)
            }
        });
    let memory = errors
        .keep(fields.size("limits.memory", raw.memory.as_ref(), d.memory))
        .and_then(|memory| {
            if memory < MIN_MEMORY {
                errors.push(fields.err(
                    "limits.memory",
                    format!("must be at least {MIN_MEMORY} (no program runs in less)"),
                ));
                None
            } else {
                Some(memory)
            }
        });
    let processes = errors
        .keep(fields.positive("limits.processes", raw.processes, d.processes))
        .and_then(|n| {
            if n > MAX_PROCESSES {
                errors.push(fields.err(
                    "limits.processes",
                    format!("must be at most {MAX_PROCESSES} (the kernel's largest process id)"),
                ));
                None
            } else {
                Some(n)
            }
        });
    let max_steps = errors.keep(fields.positive("limits.max_steps", raw.max_steps, d.max_steps));
    let max_invalid =
        errors.keep(fields.positive("limits.max_invalid", raw.max_invalid, d.max_invalid));
    let wall_time =
        errors.keep(fields.duration("limits.wall_time", raw.wall_time.as_ref(), d.wall_time));
    let command_timeout = errors.keep(fields.duration(
        "limits.command_timeout",
        raw.command_timeout.as_ref(),
        d.command_timeout,
    ));
    let output_cap =
        errors.keep(fields.size("limits.output_cap", raw.output_cap.as_ref(), d.output_cap));
    let observation_cap = errors.keep(fields.size(
        "limits.observation_cap",
        raw.observation_cap.as_ref(),
        d.observation_cap,
    ));
    let token_budget =
        errors.keep(fields.positive("limits.token_budget", raw.token_budget, d.token_budget));
    Some(Limits {
        attempts: attempts?,
        max_steps: max_steps?,
        max_invalid: max_invalid?,
        wall_time: wall_time?,
        command_timeout: command_timeout?,
        output_cap: output_cap?,
        observation_cap: observation_cap?,
        token_budget: token_budget?,
        memory: memory?,
        processes: processes?,
        // Zero is allowed: the first fault of the infrastructure ends the job.
        max_restarts: raw.max_restarts.unwrap_or(d.max_restarts),
    })
}
