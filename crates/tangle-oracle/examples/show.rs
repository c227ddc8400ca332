//! Prints the program, configuration, expected slot counts and result of a case, and optionally
//! writes its SPIR-V binary: `cargo run -p tangle-oracle --example show -- SEED [OUT.spv]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let (depth, sg, wg) = tangle_oracle::case_config(seed);
    match tangle_oracle::case_program(seed, depth, sg, wg) {
        Ok((p, e)) => {
            let src = tangle_oracle::glsl::emit(&p, wg);
            println!("{src}");
            let lens: Vec<usize> = e.iter().map(Vec::len).collect();
            println!("// depth {depth} subgroup {sg} workgroup {wg} slots per invocation {lens:?}");
            println!(
                "// result {:?}",
                tangle_oracle::run_case(seed, depth, sg, wg)
                    .err()
                    .map(|m| m.failure)
            );
            if let Some(out) = args.next() {
                match tangle_oracle::compile(&src) {
                    Ok(m) => {
                        let bytes =
                            tangle_spirv::binary::words_to_bytes(&tangle_spirv::binary::write(&m));
                        if let Err(e) = std::fs::write(&out, bytes) {
                            eprintln!("{out}: {e}");
                        }
                    }
                    Err(e) => eprintln!("{e:?}"),
                }
            }
        }
        Err(e) => println!("error {e}"),
    }
}
