fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        match tangle_spirv::Module::from_bytes(&bytes) {
            Ok(m) => {
                let w = tangle_spirv::binary::words_from_bytes(&bytes).unwrap();
                if m.to_words() != w {
                    println!("MISMATCH {path}");
                }
            }
            Err(e) => println!("ERR {path}: {e}"),
        }
    }
}
