//! The nesting-depth limit on large modules: a module nested past 2.17's limit of 1023 is
//! refused with the nesting error however deep it goes (the walk stops at the limit), and modules
//! at the limit, or wide rather than deep, stay valid. Times are printed by
//! `cargo bench -p tangle-validate --bench scaling`, never asserted.

mod common;

use common::{assemble_text, shapes};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

/// The rules of every diagnostic (empty when valid).
fn rules(text: &str) -> Vec<String> {
    let module = assemble_text(text, "vulkan1.3").expect("assembles");
    let env = TargetEnv::parse("vulkan1.3").expect("env");
    match validate(&module, env, &ValidateOptions::default()) {
        Ok(_) => Vec::new(),
        Err(found) => found.iter().map(|d| d.error.rule()).collect(),
    }
}

#[test]
fn a_100k_deep_module_is_refused_for_its_nesting_depth() {
    assert_eq!(rules(&shapes::deep(100_000)), ["Cfg::NestingTooDeep"]);
}

#[test]
fn the_nesting_limit_is_1023() {
    assert_eq!(rules(&shapes::deep(1023)), Vec::<String>::new());
    assert_eq!(rules(&shapes::deep(1024)), ["Cfg::NestingTooDeep"]);
}

#[test]
fn wide_modules_are_valid() {
    assert_eq!(rules(&shapes::wide(10_000)), Vec::<String>::new());
    assert_eq!(rules(&shapes::calls(10_000)), Vec::<String>::new());
}
