//! `PIPELINE compute name ... END` and `DERIVE_PIPELINE new FROM parent ... END`: `ATTACH` (with
//! `ENTRY_POINT` and `SPECIALIZE`), `SUBGROUP` blocks and `BIND BUFFER`.

use super::command::parse_on_off;
use super::{declare, lookup, number, uint, Parser};
use crate::error::{AmberError, Location};
use crate::script::{
    Binding, BindingKind, Pipeline, RequiredSize, ShaderBuild, ShaderFormat, SubgroupControl,
};
use crate::value::Number;

impl Parser<'_> {
    pub(super) fn pipeline(&mut self, at: Location) -> Result<(), AmberError> {
        let kind = self.cursor.expect("a pipeline type")?;
        match kind.text {
            "compute" => {}
            "graphics" | "raytracing" => {
                return Err(AmberError::unsupported(
                    kind.at,
                    format!(
                        "{} pipelines are outside tangle's compute subset",
                        kind.text
                    ),
                ))
            }
            t => {
                return Err(AmberError::new(
                    kind.at,
                    format!("unknown pipeline type '{t}'"),
                ))
            }
        }
        let name = self.cursor.expect("a pipeline name")?;
        self.cursor.end_of_statement()?;
        let mut pipeline = Pipeline {
            name: name.text.to_string(),
            shader: usize::MAX,
            entry_point: "main".into(),
            spec_constants: Vec::new(),
            subgroup: SubgroupControl::default(),
            bindings: Vec::new(),
            push_constants: None,
            build: ShaderBuild::default(),
            at,
        };
        self.pipeline_body(&mut pipeline, false)?;
        declare(
            &mut self.names.pipelines,
            name,
            "pipeline",
            self.script.pipelines.len(),
        )?;
        self.script.pipelines.push(pipeline);
        Ok(())
    }

    pub(super) fn derive_pipeline(&mut self, at: Location) -> Result<(), AmberError> {
        let name = self.cursor.expect("a pipeline name")?;
        self.cursor.keyword("FROM")?;
        let parent_tok = self.cursor.expect("the parent pipeline")?;
        let parent = lookup(&self.names.pipelines, parent_tok, "pipeline")?;
        self.cursor.end_of_statement()?;
        let mut pipeline = self
            .script
            .pipelines
            .get(parent)
            .cloned()
            .ok_or_else(|| AmberError::new(parent_tok.at, "unknown pipeline"))?;
        pipeline.name = name.text.to_string();
        pipeline.at = at;
        self.pipeline_body(&mut pipeline, true)?;
        declare(
            &mut self.names.pipelines,
            name,
            "pipeline",
            self.script.pipelines.len(),
        )?;
        self.script.pipelines.push(pipeline);
        Ok(())
    }

    /// The lines up to `END`. A derived pipeline may re-`ATTACH` and re-`BIND`.
    fn pipeline_body(&mut self, pipeline: &mut Pipeline, derived: bool) -> Result<(), AmberError> {
        let mut attached = derived;
        loop {
            if !self.cursor.next_statement() {
                return Err(AmberError::new(pipeline.at, "PIPELINE has no END"));
            }
            let Some(tok) = self.cursor.next() else {
                continue;
            };
            match tok.text {
                "END" => {
                    self.cursor.end_of_statement()?;
                    if !attached {
                        return Err(AmberError::new(
                            tok.at,
                            "the pipeline has no ATTACHed shader",
                        ));
                    }
                    return Ok(());
                }
                "ATTACH" => {
                    if attached && !derived {
                        return Err(AmberError::new(
                            tok.at,
                            "a compute pipeline takes one shader",
                        ));
                    }
                    self.attach(pipeline)?;
                    attached = true;
                }
                "SUBGROUP" => self.subgroup(pipeline)?,
                "BIND" => self.bind(pipeline)?,
                "SHADER_OPTIMIZATION" => {
                    let passes = self.option_block(pipeline, tok)?;
                    pipeline.build.passes = passes
                        .into_iter()
                        .map(|(p, _)| {
                            // amber hands the names to SPIRV-Tools' `RegisterPassesFromFlags`,
                            // which takes `--name`; a bare name (the doc's example) means the same.
                            if p.starts_with("--") {
                                p
                            } else {
                                format!("--{p}")
                            }
                        })
                        .collect();
                }
                "COMPILE_OPTIONS" => {
                    let options = self.option_block(pipeline, tok)?;
                    pipeline.build.defines = self.compile_options(pipeline, options)?;
                }
                // Graphics pipeline state, and OpenCL kernel arguments (`SET KERNEL ...`): valid
                // upstream, outside the compute subset.
                t @ ("FRAMEBUFFER_SIZE"
                | "VIEWPORT"
                | "VERTEX_DATA"
                | "INDEX_DATA"
                | "POLYGON_MODE"
                | "DEPTH"
                | "STENCIL"
                | "BLEND"
                | "PATCH_CONTROL_POINTS"
                | "SET") => {
                    return Err(AmberError::unsupported(
                        tok.at,
                        format!("pipeline command {t} is outside tangle's compute subset"),
                    ))
                }
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("unknown pipeline command '{t}'"),
                    ))
                }
            }
        }
    }

    /// The lines of a `SHADER_OPTIMIZATION shader` or `COMPILE_OPTIONS shader` block up to
    /// `END`: every word, with where it is. The shader must be the attached one.
    fn option_block(
        &mut self,
        pipeline: &Pipeline,
        block: super::cursor::Tok<'_>,
    ) -> Result<Vec<(String, Location)>, AmberError> {
        let shader_tok = self.cursor.expect("a shader name")?;
        if lookup(&self.names.shaders, shader_tok, "shader")? != pipeline.shader {
            return Err(AmberError::new(
                shader_tok.at,
                format!("{} names a shader that is not attached", block.text),
            ));
        }
        self.cursor.end_of_statement()?;
        let mut words = Vec::new();
        loop {
            if !self.cursor.next_statement() {
                return Err(AmberError::new(
                    block.at,
                    format!("{} has no END", block.text),
                ));
            }
            while let Some(t) = self.cursor.next() {
                if t.text == "END" {
                    self.cursor.end_of_statement()?;
                    return Ok(words);
                }
                words.push((t.text.to_string(), t.at));
            }
        }
    }

    /// `COMPILE_OPTIONS` for a GLSL shader: the glslang options tangle honours are preprocessor
    /// definitions (`-DNAME`, `-DNAME=VALUE`, `-D NAME[=VALUE]`); any other option would change
    /// the compiled module in a way tangle does not reproduce, so it is refused (exit 77).
    fn compile_options(
        &self,
        pipeline: &Pipeline,
        options: Vec<(String, Location)>,
    ) -> Result<Vec<(String, Option<String>)>, AmberError> {
        let format = self.script.shaders.get(pipeline.shader).map(|s| s.format);
        let mut defines = Vec::new();
        let mut words = options.into_iter();
        while let Some((word, at)) = words.next() {
            let definition = match word.strip_prefix("-D") {
                Some("") => words.next().map(|(w, _)| w),
                Some(rest) => Some(rest.to_string()),
                None => None,
            };
            let Some(definition) = definition.filter(|_| format == Some(ShaderFormat::Glsl)) else {
                return Err(AmberError::unsupported(
                    at,
                    format!(
                        "COMPILE_OPTIONS '{word}' is not an option tangle honours (GLSL -DNAME[=VALUE] only)"
                    ),
                ));
            };
            let (name, value) = match definition.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (definition, None),
            };
            if name.is_empty() {
                return Err(AmberError::new(at, "a -D option needs a name"));
            }
            defines.push((name, value));
        }
        Ok(defines)
    }

    /// `ATTACH shader [TYPE compute] [ENTRY_POINT name] [SPECIALIZE id AS type value]*`.
    fn attach(&mut self, pipeline: &mut Pipeline) -> Result<(), AmberError> {
        let shader = lookup(
            &self.names.shaders,
            self.cursor.expect("a shader name")?,
            "shader",
        )?;
        if shader != pipeline.shader {
            // Options belong to the shader they name (a derived pipeline may attach another).
            pipeline.build = ShaderBuild::default();
        }
        pipeline.shader = shader;
        while let Some(tok) = self.cursor.next() {
            match tok.text {
                "TYPE" => {
                    let ty = self.cursor.expect("a shader type")?;
                    if ty.text != "compute" {
                        return Err(AmberError::unsupported(
                            ty.at,
                            format!("only compute shaders can be attached, not '{}'", ty.text),
                        ));
                    }
                }
                "ENTRY_POINT" => {
                    pipeline.entry_point =
                        self.cursor.expect("an entry point name")?.text.to_string()
                }
                "SPECIALIZE" => {
                    let id: u32 = uint(self.cursor.expect("a SpecId")?, "the SpecId")?;
                    self.cursor.keyword("AS")?;
                    let ty = self.cursor.expect("uint32, int32 or float")?;
                    let value_tok = self.cursor.expect("a value")?;
                    let value = number(value_tok)?;
                    // Only 32-bit values (amber's ParseShaderSpecialization); ints keep their
                    // two's-complement bits, floats their IEEE bits.
                    let bits = match (ty.text, value) {
                        ("uint32" | "int32", Number::Int(v)) => v as u32,
                        ("float", v) => (v.as_f64() as f32).to_bits(),
                        ("uint32" | "int32", Number::Float(_)) => {
                            return Err(AmberError::new(
                                value_tok.at,
                                format!("'{}' is not an integer", value_tok.text),
                            ))
                        }
                        (t, _) => {
                            return Err(AmberError::new(
                                ty.at,
                                format!(
                                    "SPECIALIZE type must be uint32, int32 or float, not '{t}'"
                                ),
                            ))
                        }
                    };
                    pipeline.spec_constants.retain(|(i, _)| *i != id);
                    pipeline.spec_constants.push((id, bits));
                }
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("unexpected '{t}' in ATTACH"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// `SUBGROUP shader` + `FULLY_POPULATED`/`VARYING_SIZE`/`REQUIRED_SIZE` lines + `END`.
    fn subgroup(&mut self, pipeline: &mut Pipeline) -> Result<(), AmberError> {
        let shader_tok = self.cursor.expect("a shader name")?;
        if lookup(&self.names.shaders, shader_tok, "shader")? != pipeline.shader {
            return Err(AmberError::new(
                shader_tok.at,
                "SUBGROUP names a shader that is not attached",
            ));
        }
        self.cursor.end_of_statement()?;
        let mut control = pipeline.subgroup;
        loop {
            if !self.cursor.next_statement() {
                return Err(AmberError::new(shader_tok.at, "SUBGROUP has no END"));
            }
            let Some(tok) = self.cursor.next() else {
                continue;
            };
            match tok.text {
                "END" => break,
                "FULLY_POPULATED" => {
                    control.fully_populated = parse_on_off(self.cursor.expect("on or off")?)?
                }
                "VARYING_SIZE" => {
                    control.varying_size = parse_on_off(self.cursor.expect("on or off")?)?
                }
                "REQUIRED_SIZE" => {
                    let size = self.cursor.expect("a size, MIN or MAX")?;
                    control.required_size = Some(match size.text {
                        "MIN" => RequiredSize::Min,
                        "MAX" => RequiredSize::Max,
                        _ => {
                            let n: u32 = uint(size, "REQUIRED_SIZE")?;
                            if !n.is_power_of_two() || n > 128 {
                                return Err(AmberError::new(
                                    size.at,
                                    "REQUIRED_SIZE must be a power of two up to 128",
                                ));
                            }
                            RequiredSize::Size(n)
                        }
                    });
                }
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("unknown SUBGROUP setting '{t}'"),
                    ))
                }
            }
            self.cursor.end_of_statement()?;
        }
        self.cursor.end_of_statement()?;
        pipeline.subgroup = control;
        Ok(())
    }

    /// `BIND BUFFER b AS kind [DESCRIPTOR_SET s] BINDING b [OFFSET o] [DESCRIPTOR_OFFSET o]
    /// [DESCRIPTOR_RANGE r]`, `BIND BUFFER b AS push_constant`, and `BIND BUFFER_ARRAY b0 b1 ...`
    /// with one `OFFSET`/`DESCRIPTOR_OFFSET`/`DESCRIPTOR_RANGE` value per buffer (upstream's
    /// amber_script.md: "This creates a descriptor array of buffers ... bound to the same
    /// descriptor set and binding ID").
    fn bind(&mut self, pipeline: &mut Pipeline) -> Result<(), AmberError> {
        let what = self.cursor.expect("BUFFER, BUFFER_ARRAY or SAMPLER")?;
        let array = match what.text {
            "BUFFER" => false,
            "BUFFER_ARRAY" => true,
            "SAMPLER" => return self.bind_sampler(pipeline, false),
            "SAMPLER_ARRAY" => return self.bind_sampler(pipeline, true),
            t => {
                return Err(AmberError::new(
                    what.at,
                    format!("BIND {t} is not supported (only BUFFER, BUFFER_ARRAY, SAMPLER and SAMPLER_ARRAY)"),
                ))
            }
        };
        let mut buffers = vec![lookup(
            &self.names.buffers,
            self.cursor.expect("a buffer name")?,
            "buffer",
        )?];
        while array && self.cursor.peek().is_some_and(|t| t.text != "AS") {
            let tok = self.cursor.expect("a buffer name")?;
            buffers.push(lookup(&self.names.buffers, tok, "buffer")?);
        }
        let mut kind = BindingKind::Storage;
        let mut dynamic = false;
        if self.cursor.eat("AS") {
            let k = self.cursor.expect("a buffer binding type")?;
            (kind, dynamic) = match k.text {
                "storage" => (BindingKind::Storage, false),
                "uniform" => (BindingKind::Uniform, false),
                "storage_dynamic" => (BindingKind::Storage, true),
                "uniform_dynamic" => (BindingKind::Uniform, true),
                "storage_image" => (BindingKind::StorageImage, false),
                "sampled_image" => (BindingKind::SampledImage, false),
                "uniform_texel_buffer" => (BindingKind::UniformTexelBuffer, false),
                "storage_texel_buffer" => (BindingKind::StorageTexelBuffer, false),
                "combined_image_sampler" => (BindingKind::CombinedImageSampler, false),
                "push_constant" if !array => {
                    self.cursor.end_of_statement()?;
                    pipeline.push_constants = buffers.first().copied();
                    return Ok(());
                }
                t => {
                    return Err(AmberError::new(
                        k.at,
                        format!("buffer binding type '{t}' is not supported"),
                    ))
                }
            };
        }
        let sampler = match kind {
            BindingKind::CombinedImageSampler => {
                self.cursor.keyword("SAMPLER")?;
                let tok = self.cursor.expect("a sampler name")?;
                Some(lookup(&self.names.samplers, tok, "sampler")?)
            }
            _ => None,
        };
        let (set, binding) = self.set_and_binding()?;
        let n = buffers.len();
        let mut offsets = None;
        let mut descriptor_offsets = None;
        let mut ranges = None;
        while let Some(tok) = self.cursor.next() {
            let list = match tok.text {
                "OFFSET" if dynamic => &mut offsets,
                "DESCRIPTOR_OFFSET" if !kind.is_image() => &mut descriptor_offsets,
                "DESCRIPTOR_RANGE" if !kind.is_image() => &mut ranges,
                "BASE_MIP_LEVEL" if kind.is_image() => {
                    // tangle's images have one level: only level 0 can be the base.
                    let level: u32 = uint(self.cursor.expect("a level")?, "BASE_MIP_LEVEL")?;
                    if level != 0 {
                        return Err(AmberError::unsupported(
                            tok.at,
                            format!(
                                "BASE_MIP_LEVEL {level} is not supported (images have one level)"
                            ),
                        ));
                    }
                    continue;
                }
                t => return Err(AmberError::new(tok.at, format!("unexpected '{t}' in BIND"))),
            };
            let mut values: Vec<usize> = Vec::with_capacity(n);
            for _ in 0..n {
                values.push(uint(self.cursor.expect("a value per buffer")?, tok.text)?);
            }
            *list = Some(values);
        }
        if dynamic && offsets.is_none() {
            // Upstream refuses a dynamic buffer without its dynamic offset.
            return Err(AmberError::new(
                what.at,
                "a dynamic buffer needs an OFFSET (one per buffer)",
            ));
        }
        pipeline
            .bindings
            .retain(|b| (b.set, b.binding) != (set, binding));
        for (i, buffer) in buffers.into_iter().enumerate() {
            let at = |list: &Option<Vec<usize>>| list.as_ref().and_then(|l| l.get(i).copied());
            // The descriptor's range starts at the dynamic offset plus the descriptor offset.
            let offset = at(&offsets)
                .unwrap_or(0)
                .saturating_add(at(&descriptor_offsets).unwrap_or(0));
            pipeline.bindings.push(Binding {
                buffer,
                kind,
                set,
                binding,
                element: if array { i as u32 } else { 0 },
                offset,
                range: at(&ranges),
                sampler,
            });
        }
        Ok(())
    }

    /// `[DESCRIPTOR_SET s] BINDING b`.
    fn set_and_binding(&mut self) -> Result<(u32, u32), AmberError> {
        let set = if self.cursor.eat("DESCRIPTOR_SET") {
            uint(self.cursor.expect("a set number")?, "DESCRIPTOR_SET")?
        } else {
            0
        };
        self.cursor.keyword("BINDING")?;
        let binding = uint(self.cursor.expect("a binding number")?, "BINDING")?;
        Ok((set, binding))
    }

    /// `BIND SAMPLER s [DESCRIPTOR_SET n] BINDING b`, or `BIND SAMPLER_ARRAY s0 s1 ...` (upstream:
    /// "multiple buffer or sampler names need to be provided, separated by spaces. This creates a
    /// descriptor array of buffers or samplers bound to the same descriptor set and binding ID";
    /// it refuses an array of one name).
    fn bind_sampler(&mut self, pipeline: &mut Pipeline, array: bool) -> Result<(), AmberError> {
        let first = self.cursor.expect("a sampler name")?;
        let mut samplers = vec![lookup(&self.names.samplers, first, "sampler")?];
        while array
            && self
                .cursor
                .peek()
                .is_some_and(|t| !["DESCRIPTOR_SET", "BINDING"].contains(&t.text))
        {
            let tok = self.cursor.expect("a sampler name")?;
            samplers.push(lookup(&self.names.samplers, tok, "sampler")?);
        }
        if array && samplers.len() < 2 {
            return Err(AmberError::new(
                first.at,
                "BIND SAMPLER_ARRAY needs several sampler names",
            ));
        }
        let (set, binding) = self.set_and_binding()?;
        self.cursor.end_of_statement()?;
        pipeline
            .bindings
            .retain(|b| (b.set, b.binding) != (set, binding));
        for (element, sampler) in (0u32..).zip(samplers) {
            pipeline.bindings.push(Binding {
                buffer: usize::MAX,
                kind: BindingKind::Sampler,
                set,
                binding,
                element,
                offset: 0,
                range: None,
                sampler: Some(sampler),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse;
    use crate::script::BindingKind;

    const HEAD: &str = "SHADER compute s SPIRV-HEX\n03 02 23 07\nEND\n\
BUFFER a DATA_TYPE uint32 SIZE 256 FILL 0\nBUFFER b DATA_TYPE uint32 SIZE 256 FILL 0\n";

    /// (element, offset, range, kind) of each binding of the script's first pipeline.
    fn bindings(bind: &str) -> Vec<(usize, u32, usize, Option<usize>, BindingKind)> {
        let text = format!("{HEAD}PIPELINE compute p\nATTACH s\n{bind}\nEND\n");
        let s = parse(&text).unwrap_or_else(|e| panic!("{bind}: {}", e.message));
        s.pipelines[0]
            .bindings
            .iter()
            .map(|b| (b.buffer, b.element, b.offset, b.range, b.kind))
            .collect()
    }

    fn error(bind: &str) -> String {
        let text = format!("{HEAD}PIPELINE compute p\nATTACH s\n{bind}\nEND\n");
        parse(&text).expect_err(bind).message
    }

    #[test]
    fn buffer_arrays_bind_one_element_per_buffer_with_their_offsets_and_ranges() {
        use BindingKind::{Storage, Uniform};
        assert_eq!(
            bindings("BIND BUFFER_ARRAY a b a AS storage DESCRIPTOR_SET 1 BINDING 2"),
            vec![
                (0, 0, 0, None, Storage),
                (1, 1, 0, None, Storage),
                (0, 2, 0, None, Storage)
            ]
        );
        assert_eq!(
            bindings("BIND BUFFER_ARRAY a b AS uniform BINDING 0 DESCRIPTOR_OFFSET 16 32 DESCRIPTOR_RANGE 8 4"),
            vec![(0, 0, 16, Some(8), Uniform), (1, 1, 32, Some(4), Uniform)]
        );
        // Dynamic: the descriptor's range starts at OFFSET + DESCRIPTOR_OFFSET.
        assert_eq!(
            bindings("BIND BUFFER_ARRAY a b AS storage_dynamic BINDING 0 OFFSET 256 512 DESCRIPTOR_OFFSET 4 0"),
            vec![(0, 0, 260, None, Storage), (1, 1, 512, None, Storage)]
        );
        assert_eq!(
            bindings("BIND BUFFER a AS uniform_dynamic BINDING 0 OFFSET 256"),
            vec![(0, 0, 256, None, Uniform)]
        );
        // A later BIND of the same binding replaces every element of the earlier one.
        assert_eq!(
            bindings(
                "BIND BUFFER_ARRAY a b AS storage BINDING 0\nBIND BUFFER b AS storage BINDING 0"
            ),
            vec![(1, 0, 0, None, Storage)]
        );
    }

    #[test]
    fn buffer_array_mistakes_are_errors() {
        assert!(
            error("BIND BUFFER_ARRAY a b AS storage BINDING 0 DESCRIPTOR_OFFSET 16")
                .contains("a value per buffer")
        );
        assert!(
            error("BIND BUFFER_ARRAY a b AS storage_dynamic BINDING 0").contains("needs an OFFSET")
        );
        assert!(
            error("BIND BUFFER a AS storage BINDING 0 OFFSET 4").contains("unexpected 'OFFSET'")
        );
        assert!(error("BIND BUFFER_ARRAY a c AS storage BINDING 0").contains("unknown buffer"));
        assert!(error("BIND BUFFER_ARRAY a b AS push_constant").contains("not supported"));
    }

    /// (element, sampler index) of each binding of the first pipeline of a script declaring
    /// samplers s0 s1 s2.
    fn sampler_bindings(bind: &str) -> Result<Vec<(u32, Option<usize>, BindingKind)>, String> {
        let text = format!(
            "{HEAD}SAMPLER s0\nSAMPLER s1\nSAMPLER s2\nPIPELINE compute p\nATTACH s\n{bind}\nEND\n"
        );
        let s = parse(&text).map_err(|e| e.message)?;
        Ok(s.pipelines[0]
            .bindings
            .iter()
            .map(|b| (b.element, b.sampler, b.kind))
            .collect())
    }

    #[test]
    fn sampler_arrays_bind_one_element_per_sampler() {
        use BindingKind::Sampler;
        assert_eq!(
            sampler_bindings("BIND SAMPLER_ARRAY s2 s0 s2 DESCRIPTOR_SET 1 BINDING 3"),
            Ok(vec![
                (0, Some(2), Sampler),
                (1, Some(0), Sampler),
                (2, Some(2), Sampler)
            ])
        );
        assert_eq!(
            sampler_bindings("BIND SAMPLER s1 BINDING 0"),
            Ok(vec![(0, Some(1), Sampler)])
        );
        // Upstream refuses an array of one sampler, and an unknown name.
        let one = sampler_bindings("BIND SAMPLER_ARRAY s1 BINDING 0").expect_err("one name");
        assert!(one.contains("needs several sampler names"), "{one}");
        let unknown = sampler_bindings("BIND SAMPLER_ARRAY s1 t BINDING 0").expect_err("unknown");
        assert!(unknown.contains("unknown sampler"), "{unknown}");
    }

    #[test]
    fn combined_image_sampler_arrays_give_every_element_the_sampler() {
        let text = format!(
            "{HEAD}IMAGE i DATA_TYPE float DIM_1D WIDTH 1\nIMAGE j DATA_TYPE float DIM_1D WIDTH 1\nSAMPLER s0\nSAMPLER s1\n\
PIPELINE compute p\nATTACH s\nBIND BUFFER_ARRAY i j AS combined_image_sampler SAMPLER s1 BINDING 0\nEND\n"
        );
        let s = parse(&text).unwrap_or_else(|e| panic!("{}", e.message));
        let got: Vec<(u32, Option<usize>)> = s.pipelines[0]
            .bindings
            .iter()
            .map(|b| (b.element, b.sampler))
            .collect();
        assert_eq!(got, vec![(0, Some(1)), (1, Some(1))]);
    }
}
