//! `tangle run`'s limits, parsed strictly: `--threads`, `--step-limit`, `--time-limit` and
//! `--memory-limit` become [`RunOptions`], and a value that is not what the option takes (NaN,
//! negative, zero, too large to hold, a unit tangle does not know) is a usage error (exit 2),
//! never replaced by a default.

use super::unusable::{Kind, Unusable};
use std::time::Duration;
use tangle_exec::RunOptions;

/// The largest `--time-limit`, in seconds (about 136 years): larger values cannot be added to
/// every platform's clock.
pub const MAX_TIME_LIMIT_S: f64 = u32::MAX as f64;

/// The limits as the command line gave them (`None`: the default).
pub struct Limits<'a> {
    pub threads: Option<&'a str>,
    pub step_limit: Option<&'a str>,
    pub time_limit: Option<&'a str>,
    pub memory_limit: Option<&'a str>,
}

impl Limits<'_> {
    /// The dispatch options they ask for, or the usage error of the first bad value.
    pub fn options(&self) -> Result<RunOptions, Unusable> {
        let usage = |flag: &str, value: &str, why: String| {
            Unusable::new(Kind::Usage, format!("{flag} {value}: {why}"))
        };
        let mut options = RunOptions::default();
        if let Some(v) = self.threads {
            options.threads = threads(v).map_err(|e| usage("--threads", v, e))?;
        }
        if let Some(v) = self.step_limit {
            options.step_limit = step_limit(v).map_err(|e| usage("--step-limit", v, e))?;
        }
        if let Some(v) = self.time_limit {
            options.time_limit = time_limit(v).map_err(|e| usage("--time-limit", v, e))?;
        }
        if let Some(v) = self.memory_limit {
            options.memory_limit = bytes(v).map_err(|e| usage("--memory-limit", v, e))?;
        }
        Ok(options)
    }
}

/// `auto` or `0` (every core), or a count; the executor caps it to the machine's cores.
fn threads(v: &str) -> Result<usize, String> {
    if v == "auto" {
        return Ok(0);
    }
    digits(v)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| "must be auto or a whole number of threads (0: every core)".to_string())
}

/// A whole number of instructions, at least 1.
fn step_limit(v: &str) -> Result<u64, String> {
    digits(v).filter(|&n| n >= 1).ok_or_else(|| {
        format!(
            "must be a whole number of instructions from 1 to {}",
            u64::MAX
        )
    })
}

/// Seconds: a finite number greater than 0 and at most [`MAX_TIME_LIMIT_S`].
fn time_limit(v: &str) -> Result<Duration, String> {
    let why =
        || format!("must be a number of seconds greater than 0 and at most {MAX_TIME_LIMIT_S}");
    let s: f64 = v.parse().map_err(|_| why())?;
    if !(s > 0.0 && s <= MAX_TIME_LIMIT_S) {
        return Err(why());
    }
    Duration::try_from_secs_f64(s).map_err(|_| why())
}

/// Bytes: a whole number, optionally followed by `K`, `M`, `G` or `T` (powers of 1024, also
/// written `KiB`, `MB`, ...), at least 1.
fn bytes(v: &str) -> Result<u64, String> {
    let why = || {
        "must be a whole number of bytes, optionally followed by K, M, G or T (powers of 1024), and not 0"
            .to_string()
    };
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (number, unit) = v.split_at(split);
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(why()),
    };
    digits(number)
        .filter(|&n| n >= 1)
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(why)
}

/// A plain decimal number (no sign, no spaces), if it fits in 64 bits.
fn digits(v: &str) -> Option<u64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_values_parse() {
        assert_eq!(time_limit("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(time_limit("1e3"), Ok(Duration::from_secs(1000)));
        assert_eq!(step_limit("1"), Ok(1));
        assert_eq!(step_limit("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(bytes("512M"), Ok(512 << 20));
        assert_eq!(bytes("2G"), Ok(2 << 30));
        assert_eq!(bytes("2gib"), Ok(2 << 30));
        assert_eq!(bytes("4096"), Ok(4096));
        assert_eq!(bytes("1T"), Ok(1 << 40));
        assert_eq!(threads("auto"), Ok(0));
        assert_eq!(threads("0"), Ok(0));
        assert_eq!(threads("1000000"), Ok(1_000_000));
    }

    #[test]
    fn bad_values_are_refused_not_defaulted() {
        for v in [
            "nan", "NaN", "inf", "-1", "0", "-0", "1e19", "1e30", "", "5s", " 5",
        ] {
            assert!(time_limit(v).is_err(), "--time-limit {v}");
        }
        for v in ["0", "-1", "+5", "1.5", "18446744073709551616", "1e3", ""] {
            assert!(step_limit(v).is_err(), "--step-limit {v}");
        }
        for v in [
            "0",
            "0G",
            "-1",
            "1.5G",
            "2X",
            "G",
            "",
            "99999999999T",
            "16777216T",
        ] {
            assert!(bytes(v).is_err(), "--memory-limit {v}");
        }
        for v in ["-1", "many", "1.5", "99999999999999999999999"] {
            assert!(threads(v).is_err(), "--threads {v}");
        }
    }

    #[test]
    fn errors_are_usage_errors_naming_the_option() {
        let limits = Limits {
            threads: None,
            step_limit: None,
            time_limit: Some("nan"),
            memory_limit: None,
        };
        let e = limits.options().expect_err("nan");
        assert_eq!(e.kind, Kind::Usage);
        assert!(e.message.starts_with("--time-limit nan: must be"), "{e}");
        let limits = Limits {
            threads: Some("3"),
            step_limit: Some("7"),
            time_limit: Some("2"),
            memory_limit: Some("1G"),
        };
        let o = limits.options().expect("good limits");
        assert_eq!(
            (o.threads, o.step_limit, o.time_limit, o.memory_limit),
            (3, 7, Duration::from_secs(2), 1 << 30)
        );
    }
}
