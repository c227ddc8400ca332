//! Compiles a GLSL compute shader exactly as a `SHADER compute NAME GLSL TARGET_ENV ENV` block
//! would be, and writes the binary: `cargo run -p tangle-amber --example glsl_to_spv IN.comp
//! OUT.spv [ENV]`. Handy for writing SPIRV-ASM test scripts from GLSL (disassemble the output).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: glsl_to_spv IN.comp OUT.spv [TARGET_ENV]");
        return ExitCode::from(2);
    };
    let env = match args.get(3).map(|e| tangle_spirv::TargetEnv::parse(e)) {
        None => tangle_amber::compile::DEFAULT_TARGET_ENV,
        Some(Some(env)) => env,
        Some(None) => {
            eprintln!("unknown target environment");
            return ExitCode::from(2);
        }
    };
    let result = std::fs::read_to_string(input)
        .map_err(|e| format!("{input}: {e}"))
        .and_then(|src| tangle_amber::compile::glsl(&src, env))
        .and_then(|words| {
            std::fs::write(output, tangle_spirv::binary::words_to_bytes(&words))
                .map_err(|e| format!("{output}: {e}"))
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
