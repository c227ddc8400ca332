//! The driver's environment variables, read when an instance is created (`TANGLE_PROFILE`,
//! `TANGLE_SUBGROUP_SIZE`, `TANGLE_ALLOW`, `TANGLE_DENY`, `TANGLE_VIEW`, `TANGLE_EXEC`,
//! `TANGLE_IDENTITY`), at the first dispatch (`TANGLE_TIME_LIMIT`, `TANGLE_THREADS`) and when a
//! device is destroyed (`TANGLE_REPORT`). docs/driver.md lists them.

use tangle_exec::Profile;

/// The profile variable: a built-in profile's name or a profile file, as `tangle run
/// --profile` takes.
pub const PROFILE: &str = "TANGLE_PROFILE";
/// The identity variable: `profile` reports the profile's device (vendor, device and driver
/// ID, name) instead of tangle's own.
pub const IDENTITY: &str = "TANGLE_IDENTITY";
/// The report variable: a file the findings are written to as JSON when a device is destroyed.
pub const REPORT: &str = "TANGLE_REPORT";
/// The threads variable: the most worker threads a dispatch takes (unset, empty or 0: one a
/// core; more than the machine's cores: its cores), as `LP_NUM_THREADS` sets lavapipe's.
pub const THREADS: &str = "TANGLE_THREADS";

/// The worker threads `TANGLE_THREADS` asks for ([`tangle_exec::RunOptions::threads`]: 0 is
/// every core), read once: a dispatch asks for it every time. A value that is not a number
/// is said on stderr once and means every core.
pub fn threads() -> usize {
    static THREADS_ASKED: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS_ASKED.get_or_init(|| parse_threads(&std::env::var(THREADS).unwrap_or_default()))
}

/// `TANGLE_THREADS`'s value as a thread count (0: every core).
fn parse_threads(value: &str) -> usize {
    match value.trim() {
        "" => 0,
        v => v.parse().unwrap_or_else(|_| {
            say(&format!(
                "{THREADS}={v}: not a number of threads; every core is used"
            ));
            0
        }),
    }
}

/// The time-limit variable: the most seconds one dispatch may run, as `tangle run --time-limit`
/// (the executor's minute when unset).
pub const TIME_LIMIT: &str = "TANGLE_TIME_LIMIT";

/// The subgroup size variable: the device's subgroup size instead of the profile's.
pub const SUBGROUP_SIZE: &str = "TANGLE_SUBGROUP_SIZE";
/// The finding kinds not looked for, as `tangle run --allow` takes them.
pub const ALLOW: &str = "TANGLE_ALLOW";
/// The warning kinds reported as errors, as `tangle run --deny` takes them.
pub const DENY: &str = "TANGLE_DENY";
/// A folder the driver writes pictures of its pipelines' dispatches into
/// ([`crate::view`]).
pub const VIEW: &str = "TANGLE_VIEW";
/// Set by `tangle exec` to a folder of its own: the driver prints no summary on stderr (`tangle
/// exec` prints it when the program ends) and writes each device's JSON report there.
pub const EXEC: &str = "TANGLE_EXEC";
/// Which invocation holds which cooperative-matrix element, as `tangle run --coopmat-layout`
/// takes it (`row-striped`, `column-striped`, `shuffled:SEED`): the mapping is
/// implementation-defined, so a program whose results depend on it is shown as such.
pub const COOPMAT_LAYOUT: &str = "TANGLE_COOPMAT_LAYOUT";

/// What the environment asks of an instance's devices, read once at `vkCreateInstance`.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `TANGLE_ALLOW`: kinds not looked for.
    pub allow: tangle_exec::check::kind::KindSet,
    /// `TANGLE_DENY`: warning kinds reported as errors.
    pub deny: tangle_exec::check::kind::KindSet,
    /// `TANGLE_VIEW`: where pictures go.
    pub view: Option<std::path::PathBuf>,
    /// `TANGLE_EXEC`: where `tangle exec` collects the reports.
    pub exec: Option<std::path::PathBuf>,
    /// `TANGLE_COOPMAT_LAYOUT`: the cooperative-matrix layout dispatches run with.
    pub coopmat_layout: tangle_exec::policy::CoopmatLayout,
}

/// A variable's value, `None` when unset or empty.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The profile and the settings the environment asks for, or why they cannot be had (an
/// unknown profile or kind, a subgroup size the executor does not run).
pub fn settings() -> Result<(Profile, Settings), String> {
    let mut profile = profile()?;
    if let Some(n) = var(SUBGROUP_SIZE) {
        let size = n
            .parse::<u32>()
            .ok()
            .and_then(|size| profile.clone().with_subgroup_size(size));
        profile =
            size.ok_or_else(|| format!("{SUBGROUP_SIZE}={n}: not a power of two in 1..=128"))?;
    }
    let (allow, deny) = tangle_exec::check::kind::allow_and_deny(
        var(ALLOW).as_deref(),
        var(DENY).as_deref(),
        (ALLOW, DENY),
    )?;
    let coopmat_layout = match var(COOPMAT_LAYOUT) {
        Some(l) => l
            .parse()
            .map_err(|e| format!("{COOPMAT_LAYOUT}={l}: {e}"))?,
        None => Default::default(),
    };
    Ok((
        profile,
        Settings {
            allow,
            deny,
            view: var(VIEW).map(Into::into),
            exec: var(EXEC).map(Into::into),
            coopmat_layout,
        },
    ))
}

/// The profile `TANGLE_PROFILE` names (`default` when unset or empty), or why it names none.
pub fn profile() -> Result<Profile, String> {
    let name = std::env::var(PROFILE).unwrap_or_default();
    profile_named(if name.is_empty() { "default" } else { &name })
}

/// The physical device's claims: `profile` ([`settings`]), with its identity when
/// `TANGLE_IDENTITY=profile` (`tangle` or unset: tangle's own).
pub fn caps(profile: Profile) -> Result<crate::caps::Caps, String> {
    let caps = crate::caps::Caps::new(profile);
    match std::env::var(IDENTITY).unwrap_or_default().as_str() {
        "" | "tangle" => Ok(caps),
        "profile" => caps
            .with_profile_identity()
            .map_err(|e| format!("{IDENTITY}=profile: {e}")),
        other => Err(format!(
            "{IDENTITY}={other}: expected 'profile' or 'tangle'"
        )),
    }
}

/// A built-in profile by name, else a profile file.
pub fn profile_named(name: &str) -> Result<Profile, String> {
    if let Some(p) = Profile::by_name(name) {
        return Ok(p);
    }
    if std::path::Path::new(name).is_file() {
        let text = std::fs::read_to_string(name).map_err(|e| format!("{PROFILE}={name}: {e}"))?;
        return Profile::from_toml(&text).map_err(|e| format!("{PROFILE}={name}: {e}"));
    }
    let known: Vec<String> = Profile::all().into_iter().map(|p| p.name).collect();
    Err(format!(
        "{PROFILE}={name}: no such profile (known: {}; or a profile file)",
        known.join(", ")
    ))
}

/// Where `TANGLE_REPORT` asks the JSON report to go, if anywhere.
pub fn report_path() -> Option<std::path::PathBuf> {
    std::env::var_os(REPORT)
        .filter(|v| !v.is_empty())
        .map(Into::into)
}

/// The time limit of every dispatch: `TANGLE_TIME_LIMIT`'s seconds, read once per process; the
/// executor's default when it is unset, or when it is not a number of seconds above 0 (said
/// once on stderr).
pub fn time_limit() -> std::time::Duration {
    static LIMIT: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let default = tangle_exec::RunOptions::default().time_limit;
        let Some(text) = std::env::var_os(TIME_LIMIT).filter(|v| !v.is_empty()) else {
            return default;
        };
        seconds(&text.to_string_lossy()).unwrap_or_else(|| {
            say(&format!(
                "{TIME_LIMIT}={}: not a number of seconds above 0; the limit stays {} s",
                text.to_string_lossy(),
                default.as_secs()
            ));
            default
        })
    })
}

/// A number of seconds above 0 (fractions allowed), as a duration.
fn seconds(text: &str) -> Option<std::time::Duration> {
    let s: f64 = text.trim().parse().ok()?;
    (s > 0.0)
        .then(|| std::time::Duration::try_from_secs_f64(s).ok())
        .flatten()
}

/// Prints one driver message on stderr, as `tangle-icd: MESSAGE`: the program's own output
/// stays on stdout, and the loader's debug messenger is not the driver's to call.
pub fn say(message: &str) {
    eprintln!("tangle-icd: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_are_seconds_above_zero() {
        assert_eq!(seconds("5"), Some(std::time::Duration::from_secs(5)));
        assert_eq!(
            seconds(" 0.5 "),
            Some(std::time::Duration::from_millis(500))
        );
        for bad in ["0", "-1", "five", "NaN", "inf", "1e400", ""] {
            assert_eq!(seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn thread_counts() {
        assert_eq!(parse_threads(""), 0);
        assert_eq!(parse_threads(" 2 "), 2);
        assert_eq!(parse_threads("two"), 0);
    }

    #[test]
    fn profiles_by_name_and_file() {
        assert_eq!(profile_named("nvidia").map(|p| p.subgroup_size), Ok(32));
        let err = profile_named("nope").expect_err("unknown");
        assert!(err.contains("known: default"), "{err}");
        let file =
            std::env::temp_dir().join(format!("tangle-icd-profile-{}.toml", std::process::id()));
        let text = Profile::by_name("lavapipe")
            .expect("built in")
            .to_toml(None);
        std::fs::write(&file, text).expect("temp file");
        let named = profile_named(file.to_str().expect("utf-8 path"));
        let _ = std::fs::remove_file(&file);
        assert_eq!(named.map(|p| p.subgroup_size), Ok(8));
    }
}
