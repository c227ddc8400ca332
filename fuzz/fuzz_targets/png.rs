//! Fuzz target: arbitrary bytes → the PNG decoder of `BUFFER ... FILE PNG`
//! (`tangle_amber::png_data`). Every input decodes or is refused with an error; none may panic or
//! allocate past the limit it is given (1 MiB of pixels here).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = tangle_amber::png_data::decode_rgba8(data, 1 << 20) {
        assert_eq!(
            p.rgba.len() as u64,
            u64::from(p.width) * u64::from(p.height) * 4,
            "RGBA8 pixels of the header's size"
        );
    }
});
