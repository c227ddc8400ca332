//! The GLSL → SPIR-V compile through glslang's C API, and so the crate's only `unsafe` code.
//!
//! The safe `glslang` crate generates SPIR-V without debug information and keeps its shader and
//! program handles private, so the compile that must pass `generate_debug_info` (glslang `-g`:
//! `OpString`, `OpSource` with the text, `OpLine`, `OpModuleProcessed`) is done here, call for
//! call as the crate's `Shader::parse` + `Program::compile` do it, plus the debug-info options.
//! What the safe crate offers is used: [`glslang::Compiler::acquire`] initialises the process
//! once (`glslang_initialize_process`; the `&'static Compiler` it returns is proof of that), and
//! its `ShaderInput::new` has already checked the version and profile (in `compile/mod.rs`).
//!
//! Soundness rests on these rules, repeated at each block:
//! * every pointer handed to glslang points into a local that outlives the handle using it:
//!   the source, the preamble and the file name are `CString`s declared before the handles (so
//!   dropped after them); the `glslang_input_t` is boxed, since `glslang_shader_create` keeps the
//!   address of its `code` field (`TShader::setStrings`) and reads it again when preprocessing;
//!   the resource limits are the `glslang` crate's `'static` defaults;
//! * every handle is checked non-null, owned by one guard and deleted exactly once, the program
//!   before the shader it links (the guards are declared in that order, so dropped in reverse);
//! * the source file and text are attached, and SPIR-V generated, only after a successful link:
//!   before it the program has no compute intermediate and glslang would dereference null;
//! * the SPIR-V is copied into a buffer of the size `glslang_program_SPIRV_get_size` gives, and
//!   the logs are C strings glslang owns, copied out before the handle is deleted;
//! * compiles on several threads at once are what the safe crate allows too (its `Compiler` is
//!   shared across threads): every handle here is local to one call.

use glslang::limits::{ResourceLimits, DEFAULT_LIMITS};
use glslang::{SpirvVersion, VulkanVersion};
use glslang_sys as sys;
use std::ffi::{CStr, CString};
use std::ptr::NonNull;

/// glslang's default resource limits, as the safe crate passes them (`ShaderInput::new`).
static LIMITS: ResourceLimits = DEFAULT_LIMITS;

/// What one compile needs beyond the source.
pub struct Request<'a> {
    /// The Vulkan version the shader is checked against.
    pub vulkan: VulkanVersion,
    /// The SPIR-V version generated.
    pub spirv: SpirvVersion,
    /// Preprocessor definitions (`-DNAME[=VALUE]`).
    pub defines: &'a [(&'a str, Option<&'a str>)],
    /// The source file name for `OpString`/`OpSource`/`OpLine`; `None`: no debug information.
    pub file: Option<&'a str>,
}

/// Owns a `glslang_shader_t`.
struct ShaderHandle(NonNull<sys::glslang_shader_t>);

impl Drop for ShaderHandle {
    fn drop(&mut self) {
        // SAFETY: created by glslang_shader_create, deleted once, here; the program that linked
        // it was dropped first (declared after it).
        unsafe { sys::glslang_shader_delete(self.0.as_ptr()) }
    }
}

/// Owns a `glslang_program_t`.
struct ProgramHandle(NonNull<sys::glslang_program_t>);

impl Drop for ProgramHandle {
    fn drop(&mut self) {
        // SAFETY: created by glslang_program_create, deleted once, here.
        unsafe { sys::glslang_program_delete(self.0.as_ptr()) }
    }
}

/// Copies a C string glslang owns (a log); null is empty.
fn owned(text: *const std::os::raw::c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: glslang's logs are NUL-terminated strings that live as long as their handle,
    // which the caller holds across this call.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// glslang's client version for a Vulkan version (the safe crate's `Target::env_version`).
fn client_version(v: VulkanVersion) -> Option<sys::glslang_target_client_version_t> {
    use sys::glslang_target_client_version_t as C;
    Some(match v {
        VulkanVersion::Vulkan1_0 => C::Vulkan1_0,
        VulkanVersion::Vulkan1_1 => C::Vulkan1_1,
        VulkanVersion::Vulkan1_2 => C::Vulkan1_2,
        VulkanVersion::Vulkan1_3 => C::Vulkan1_3,
        VulkanVersion::Vulkan1_4 => C::Vulkan1_4,
        // The enum is non-exhaustive; compile/mod.rs never asks for a later version.
        _ => return None,
    })
}

/// Compiles a GLSL compute shader; the error is glslang's log.
pub fn compile(source: &str, request: &Request) -> Result<Vec<u32>, String> {
    // The `&'static Compiler` is the proof that glslang_initialize_process succeeded.
    let _compiler = glslang::Compiler::acquire().ok_or("glslang could not be initialised")?;
    let client_version =
        client_version(request.vulkan).ok_or("glslang has no client version for the target")?;
    let code = CString::new(source).map_err(|_| "the GLSL source contains a NUL character")?;
    let file = request
        .file
        .map(CString::new)
        .transpose()
        .map_err(|_| "the shader name contains a NUL character")?;
    // The definitions go in the preamble, as the safe crate puts them.
    let preamble: String = request
        .defines
        .iter()
        .map(|(name, value)| format!("#define {name} {}\n", value.unwrap_or_default()))
        .collect();
    let preamble = CString::new(preamble).map_err(|_| "a definition contains a NUL character")?;
    let input = Box::new(sys::glslang_input_t {
        language: sys::glslang_source_t::GLSL,
        stage: sys::glslang_stage_t::Compute,
        client: sys::glslang_client_t::Vulkan,
        client_version,
        target_language: sys::glslang_target_language_t::SPIRV,
        target_language_version: request.spirv,
        code: code.as_ptr(),
        // No forced version: the source's `#version` (ShaderInput::new's default).
        default_version: 100,
        default_profile: sys::glslang_profile_t::None,
        force_default_version_and_profile: 0,
        forward_compatible: 0,
        messages: sys::glslang_messages_t::DEFAULT,
        // SAFETY of the cast: ResourceLimits is #[repr(transparent)] over glslang_resource_t.
        resource: std::ptr::from_ref(&LIMITS).cast::<sys::glslang_resource_t>(),
        // No include callbacks, as the safe crate without a handler: glslang's own includer.
        callbacks: sys::glsl_include_callbacks_t {
            include_system: None,
            include_local: None,
            free_include_result: None,
        },
        callbacks_ctx: std::ptr::null_mut(),
    });

    // SAFETY: `input` is boxed and outlives the shader; `code` (which it points to) too.
    let shader = NonNull::new(unsafe { sys::glslang_shader_create(&*input) })
        .map(ShaderHandle)
        .ok_or("glslang could not create a shader")?;
    if !request.defines.is_empty() {
        // SAFETY: glslang keeps the pointer (TShader::setPreamble does not copy); `preamble`
        // is declared before `shader`, so it outlives it.
        unsafe { sys::glslang_shader_set_preamble(shader.0.as_ptr(), preamble.as_ptr()) }
    }
    // SAFETY: live handle and input; the log is copied while the handle lives.
    let parsed = unsafe {
        sys::glslang_shader_preprocess(shader.0.as_ptr(), &*input) != 0
            && sys::glslang_shader_parse(shader.0.as_ptr(), &*input) != 0
    };
    if !parsed {
        // SAFETY: live handle.
        return Err(owned(unsafe {
            sys::glslang_shader_get_info_log(shader.0.as_ptr())
        }));
    }

    // SAFETY: no argument; checked non-null.
    let program = NonNull::new(unsafe { sys::glslang_program_create() })
        .map(ProgramHandle)
        .ok_or("glslang could not create a program")?;
    // The same messages as the safe crate's Program::compile.
    let messages = sys::glslang_messages_t::DEFAULT
        | sys::glslang_messages_t::VULKAN_RULES
        | sys::glslang_messages_t::SPV_RULES;
    // SAFETY: both handles live; the program is dropped before the shader.
    let linked = unsafe {
        sys::glslang_program_add_shader(program.0.as_ptr(), shader.0.as_ptr());
        sys::glslang_program_link(program.0.as_ptr(), messages.0) != 0
    };
    if !linked {
        // SAFETY: live handle.
        return Err(owned(unsafe {
            sys::glslang_program_get_info_log(program.0.as_ptr())
        }));
    }
    if let Some(file) = &file {
        // After linking, the program's compute intermediate exists (it is the one shader's).
        // The original text, not the preprocessed one glslang parsed, so that the source lines
        // shown are the author's (comments and macros included); the preprocessor keeps line
        // numbers, so OpLine's lines index this text.
        // SAFETY: live handle; glslang copies both strings (std::string), pointer and length
        // from one live CString.
        unsafe {
            sys::glslang_program_set_source_file(
                program.0.as_ptr(),
                sys::glslang_stage_t::Compute,
                file.as_ptr(),
            );
            sys::glslang_program_add_source_text(
                program.0.as_ptr(),
                sys::glslang_stage_t::Compute,
                code.as_ptr(),
                source.len(),
            );
        }
    }
    // glslang_program_SPIRV_generate's options (optimizer off, validation on), plus debug info.
    let mut options = sys::glslang_spv_options_t {
        generate_debug_info: file.is_some(),
        strip_debug_info: false,
        disable_optimizer: true,
        optimize_size: false,
        optimize_performance: false,
        disassemble: false,
        validate: true,
        emit_nonsemantic_shader_debug_info: false,
        emit_nonsemantic_shader_debug_source: false,
        compile_only: false,
        optimize_allow_expanded_id_bound: false,
        compiler_signature: std::ptr::null(),
        command_line_arguments: std::ptr::null(),
        current_working_directory: std::ptr::null(),
    };
    // SAFETY: live linked program; `options` lives across the call.
    unsafe {
        sys::glslang_program_SPIRV_generate_with_options(
            program.0.as_ptr(),
            sys::glslang_stage_t::Compute,
            &mut options,
        )
    }
    // SAFETY: live handle; the buffer has exactly the size glslang reports.
    let words = unsafe {
        let size = sys::glslang_program_SPIRV_get_size(program.0.as_ptr());
        let mut words = vec![0u32; size];
        sys::glslang_program_SPIRV_get(program.0.as_ptr(), words.as_mut_ptr());
        words
    };
    Ok(words)
}
