//! Compiles a GLSL compute shader file to SPIR-V: `cargo run -p tangle-oracle --example spv --
//! IN.comp OUT.spv` (a helper for writing the assembly tests).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: spv IN.comp OUT.spv");
        return;
    };
    let src = std::fs::read_to_string(input).unwrap_or_default();
    match tangle_oracle::compile(&src) {
        Ok(m) => {
            let bytes = tangle_spirv::binary::words_to_bytes(&tangle_spirv::binary::write(&m));
            if let Err(e) = std::fs::write(output, bytes) {
                eprintln!("{output}: {e}");
            }
        }
        Err(e) => eprintln!("{e:?}"),
    }
}
