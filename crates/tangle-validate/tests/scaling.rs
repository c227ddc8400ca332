//! Validation time grows about linearly: builds a 10k-instruction compute module and prints the
//! time to validate it (no assertion on time; run with `--release --nocapture` to read it; the
//! goal is well under 10 ms in release builds). The module must validate.

use spirv::Op;
use std::time::Instant;
use tangle_spirv::{Header, Instruction, Module, Operand, TargetEnv};
use tangle_validate::{validate, ValidateOptions};

fn inst(op: Op, ty: Option<u32>, id: Option<u32>, operands: Vec<Operand>) -> Instruction {
    Instruction::new(op as u16, ty, id, operands)
}

/// A straight-line function of `n` dependent integer additions, split into blocks of 100.
fn big_module(n: u32) -> Module {
    use tangle_spirv::grammar::OperandKind as K;
    let (void, fnty, u32t, one, main) = (1, 2, 3, 4, 5);
    let mut next = 6;
    let mut v = vec![
        inst(
            Op::Capability,
            None,
            None,
            vec![Operand::Enum(
                K::Capability,
                spirv::Capability::Shader as u32,
            )],
        ),
        inst(
            Op::MemoryModel,
            None,
            None,
            vec![
                Operand::Enum(K::AddressingModel, 0),
                Operand::Enum(K::MemoryModel, 1),
            ],
        ),
        inst(
            Op::EntryPoint,
            None,
            None,
            vec![
                Operand::Enum(K::ExecutionModel, 5),
                Operand::Id(main),
                Operand::String("main".into()),
            ],
        ),
        inst(
            Op::ExecutionMode,
            None,
            None,
            vec![
                Operand::Id(main),
                Operand::Enum(K::ExecutionMode, 17),
                Operand::Int(1),
                Operand::Int(1),
                Operand::Int(1),
            ],
        ),
        inst(Op::TypeVoid, None, Some(void), vec![]),
        inst(Op::TypeFunction, None, Some(fnty), vec![Operand::Id(void)]),
        inst(
            Op::TypeInt,
            None,
            Some(u32t),
            vec![Operand::Int(32), Operand::Int(0)],
        ),
        inst(Op::Constant, Some(u32t), Some(one), vec![Operand::Int(1)]),
        inst(
            Op::Function,
            Some(void),
            Some(main),
            vec![Operand::Enum(K::FunctionControl, 0), Operand::Id(fnty)],
        ),
    ];
    let mut last = one;
    let blocks = n / 100;
    for _ in 0..blocks {
        v.push(inst(Op::Label, None, Some(next), vec![]));
        next += 1;
        for _ in 0..98 {
            v.push(inst(
                Op::IAdd,
                Some(u32t),
                Some(next),
                vec![Operand::Id(last), Operand::Id(one)],
            ));
            last = next;
            next += 1;
        }
        v.push(inst(Op::Branch, None, None, vec![Operand::Id(next)]));
    }
    v.push(inst(Op::Label, None, Some(next), vec![]));
    next += 1;
    v.push(inst(Op::Return, None, None, vec![]));
    v.push(inst(Op::FunctionEnd, None, None, vec![]));
    Module {
        header: Header {
            version: (1, 6),
            generator: 0,
            bound: next,
            schema: 0,
        },
        instructions: v,
    }
}

#[test]
fn ten_thousand_instructions_validate_in_linear_time() {
    let module = big_module(10_000);
    assert!(module.instructions.len() >= 10_000);
    let env = TargetEnv::parse("vulkan1.3").expect("env");
    let options = ValidateOptions::default();
    // Warm up once (grammar index, allocations), then time a few runs.
    let first = validate(&module, env, &options);
    assert!(first.is_ok(), "{:?}", first.err());
    let start = Instant::now();
    let runs = 5;
    for _ in 0..runs {
        let _ = validate(&module, env, &options);
    }
    let each = start.elapsed() / runs;
    eprintln!(
        "validated {} instructions in {each:?} per run",
        module.instructions.len()
    );
}
