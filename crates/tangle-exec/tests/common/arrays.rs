//! Shared setup of the descriptor-array tests of images and samplers (`image_arrays.rs`,
//! `sampler_arrays.rs`): binding elements as the Amber runner does (element 0 as the binding's
//! plain descriptor, the others as array elements), one dispatch, reading texels and results
//! back, and checking that the findings are exactly the expected unbound elements, each named
//! by its binding and index.

use tangle_exec::semantics::sampler::Sampler;
use tangle_exec::semantics::texel::TexelFormat;
use tangle_exec::{Device, Finding, Image, Pipeline, Profile, Report, Resources, RunOptions};

/// A `R32_UINT` image of `extent` with these texels.
pub fn r32ui(extent: [u32; 3], texels: &[u32]) -> Image {
    Image {
        format: TexelFormat::by_name("R32_UINT").expect("format"),
        extent,
        texels: super::u32s(texels),
    }
}

/// Binds `image` as element `e` of the image array at `(set, binding)`.
pub fn bind_image(res: &mut Resources, (set, binding): (u32, u32), e: u32, image: Image) {
    match e {
        0 => res.images.insert((set, binding), image),
        e => res.image_elements.insert((set, binding, e), image),
    };
}

/// Binds `sampler` as element `e` of the sampler (or combined image sampler) array at
/// `(set, binding)`.
pub fn bind_sampler(res: &mut Resources, (set, binding): (u32, u32), e: u32, sampler: Sampler) {
    match e {
        0 => res.samplers.insert((set, binding), sampler),
        e => res.sampler_elements.insert((set, binding, e), sampler),
    };
}

/// The texels of element `e` of the image array at `(set, binding)`, as `u32`s.
pub fn texels(res: &Resources, (set, binding): (u32, u32), e: u32) -> Vec<u32> {
    let image = match e {
        0 => &res.images[&(set, binding)],
        e => &res.image_elements[&(set, binding, e)],
    };
    super::to_u32s(&image.texels)
}

/// The pipeline of a GLSL compute shader (`main`) on the default profile.
pub fn pipeline(src: &str) -> Pipeline {
    Device::new(Profile::default())
        .compute_pipeline(&super::compile(src), "main", &Default::default())
        .unwrap_or_else(|e| panic!("pipeline: {e}"))
}

/// One workgroup over `res`.
pub fn dispatch(pipeline: &Pipeline, res: &mut Resources) -> Report {
    pipeline
        .dispatch(res, [1, 1, 1], &RunOptions::default())
        .unwrap_or_else(|e| panic!("dispatch: {e}"))
}

/// A finding of the use of an unbound descriptor-array element: the local invocation, and the
/// `set`, `binding`, index and declared length (`None`: runtime-sized) of the array it names.
pub type Unbound = (u32, (u32, u32, i64, Option<u32>));

/// Asserts that the report's findings are exactly `want`, in any order.
pub fn assert_unbound(report: &Report, want: &[Unbound]) {
    let mut got: Vec<Unbound> = report
        .diagnostics
        .iter()
        .map(|d| match d.finding {
            Finding::UnboundDescriptor {
                set,
                binding,
                index,
                count,
            } => (d.invocation[0], (set, binding, index, count)),
            _ => panic!("not an unbound descriptor: {d}"),
        })
        .collect();
    let mut want = want.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{:?}", report.diagnostics);
}
