//! Throwaway.
fn main() {
    let mut bad = 0;
    for seed in 0..200u64 {
        let sg = 4u32 << (seed % 6);
        let wg = 300 + (seed * 37 % 700) as u32;
        if let Err(m) = tangle_oracle::run_case(seed + 777, 2 + (seed % 5) as u32, sg, wg) {
            bad += 1;
            if bad < 2 {
                println!("{m}");
            }
        }
    }
    println!("bad {bad}");
}
