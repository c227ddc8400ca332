//! Functions: the slot pre-pass, blocks with their structured facts and phis, terminators, calls,
//! and the per-instruction dispatch to [`super::arith`] and [`super::memory`].

use super::{Lowerer, Out, Value};
use crate::error::{ExecError, InstRef};
use crate::program::{Block, Function, Op, Place, Terminator, Type};
use spirv::Op as SpvOp;
use std::collections::HashMap;
use tangle_spirv::module::Instruction;

/// One phi's sources: destination slot, slot count, and (value, parent label) pairs.
type PhiSources = (u32, u32, Vec<(Value, u32)>);

/// One function's instructions, split into blocks.
struct RawFunction<'m> {
    id: u32,
    params: Vec<&'m Instruction>,
    /// Blocks: label id and the instructions after the label.
    blocks: Vec<(u32, Vec<&'m Instruction>)>,
}

impl<'m> Lowerer<'m> {
    /// Lowers every function; the entry point's index is recorded in the program.
    pub fn functions(&mut self, entry: u32) -> Result<(), ExecError> {
        let raw = self.split_functions()?;
        for (i, f) in raw.iter().enumerate() {
            self.function_ids.insert(f.id, i as u32);
        }
        self.program.entry = *self
            .function_ids
            .get(&entry)
            .ok_or_else(|| self.malformed("the entry point has no body"))?;
        for f in &raw {
            self.allocate_slots(f)?;
        }
        for f in &raw {
            let lowered = self.lower_function(f)?;
            self.program.functions.push(lowered);
        }
        Ok(())
    }

    fn split_functions(&mut self) -> Result<Vec<RawFunction<'m>>, ExecError> {
        let module = self.module;
        let mut out = Vec::new();
        let mut cur: Option<RawFunction<'m>> = None;
        for inst in &module.instructions {
            self.at = InstRef::of(inst);
            match inst.op() {
                Some(SpvOp::Function) => {
                    let id = inst
                        .result_id
                        .ok_or_else(|| self.malformed("function without id"))?;
                    cur = Some(RawFunction {
                        id,
                        params: Vec::new(),
                        blocks: Vec::new(),
                    });
                }
                Some(SpvOp::FunctionParameter) => {
                    if let Some(f) = cur.as_mut() {
                        f.params.push(inst);
                    }
                }
                Some(SpvOp::FunctionEnd) => {
                    if let Some(f) = cur.take() {
                        if !f.blocks.is_empty() {
                            out.push(f);
                        }
                    }
                }
                Some(SpvOp::Label) => {
                    let id = inst
                        .result_id
                        .ok_or_else(|| self.malformed("label without id"))?;
                    if let Some(f) = cur.as_mut() {
                        f.blocks.push((id, Vec::new()));
                    }
                }
                _ => {
                    if let Some((_, b)) = cur.as_mut().and_then(|f| f.blocks.last_mut()) {
                        b.push(inst);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Gives every result id of a function its slots (so phis and back edges can refer forward).
    fn allocate_slots(&mut self, f: &RawFunction<'m>) -> Result<(), ExecError> {
        for p in &f.params {
            self.at = InstRef::of(p);
            let ty = self.lower_type(p.result_type)?;
            let n = self.program.ty(ty).slots;
            let slot = self.alloc(n)?;
            if let Some(id) = p.result_id {
                self.values.insert(id, Value { slot, ty });
                if let Type::Pointer { pointee, .. } = self.program.ty(ty).ty {
                    self.pointees.insert(id, pointee);
                }
            }
        }
        let all: Vec<&Instruction> = f
            .blocks
            .iter()
            .flat_map(|(_, b)| b.iter().copied())
            .collect();
        for inst in &all {
            if inst.op() == Some(SpvOp::Variable) {
                self.at = InstRef::of(inst);
                self.lower_type(inst.result_type)?;
            }
        }
        let (promoted, roots) = self.promotable(&all);
        let blocks: Vec<Vec<&Instruction>> = f.blocks.iter().map(|(_, b)| b.clone()).collect();
        let (aliasable, single) = Self::aliasable_loads(&blocks, &roots);
        self.alias_loads.extend(aliasable);
        self.single_use.extend(single);
        for (_, insts) in &f.blocks {
            for inst in insts {
                self.at = InstRef::of(inst);
                let (Some(id), Some(_)) = (inst.result_id, inst.result_type) else {
                    continue;
                };
                let ty = self.lower_type(inst.result_type)?;
                if promoted.contains(&id) {
                    let pointee = self.pointee_of(ty)?;
                    let slot = self.alloc(self.program.ty(pointee).slots)?;
                    self.values.insert(id, Value { slot, ty });
                    self.reg_ptrs.insert(id, (slot, pointee));
                    continue;
                }
                if inst.op() == Some(SpvOp::Variable) {
                    let pointee = self.pointee_of(ty)?;
                    let size = self.program.ty(pointee).size;
                    let offset = self.alloc_invocation(size);
                    let v = super::memory::pointer_value(
                        crate::program::RegionKind::Invocation,
                        offset,
                    );
                    let slot = self.constant(v)?;
                    self.values.insert(id, Value { slot, ty });
                    self.pointees.insert(id, pointee);
                    continue;
                }
                let n = self.program.ty(ty).slots;
                let slot = self.alloc(n)?;
                self.values.insert(id, Value { slot, ty });
            }
        }
        Ok(())
    }

    fn lower_function(&mut self, f: &RawFunction<'m>) -> Result<Function, ExecError> {
        let index: HashMap<u32, u32> = f
            .blocks
            .iter()
            .enumerate()
            .map(|(i, (l, _))| (*l, i as u32))
            .collect();
        let block_of = |this: &Self, label: Option<u32>| -> Result<u32, ExecError> {
            label
                .and_then(|l| index.get(&l).copied())
                .ok_or_else(|| this.malformed("branch to a label outside the function"))
        };
        let mut params = Vec::new();
        for p in &f.params {
            let v = self.value(p.result_id)?;
            params.push((v.slot, self.program.ty(v.ty).slots));
        }
        let mut blocks = Vec::new();
        let mut succ = Vec::new();
        let mut merges = Vec::new();
        let mut conts = Vec::new();
        // Phi sources per block: (dst slot, slots, [(value, parent label)]).
        let mut phi_lists: Vec<Vec<PhiSources>> = Vec::new();
        for (label, insts) in &f.blocks {
            let mut block = Block {
                label: *label,
                ..Block::default()
            };
            let mut out = Out::default();
            let mut phis = Vec::new();
            let mut targets = Vec::new();
            // SPIR-V 2.4 OpLine: "This location information applies to the instructions
            // physically following this instruction, up to the first occurrence of any of the
            // following: the next end of block, the next OpLine instruction, or the next
            // OpNoLine instruction."
            self.line = None;
            for inst in insts {
                self.track_line(inst);
                self.at = InstRef::of(inst);
                self.at.source = self.line.clone();
                let op = inst.op();
                match op {
                    Some(SpvOp::Phi) => {
                        let v = self.value(inst.result_id)?;
                        let n = self.program.ty(v.ty).slots;
                        let mut incoming = Vec::new();
                        for pair in inst.operands.chunks(2) {
                            let (Some(val), Some(parent)) = (
                                pair.first().and_then(|o| o.id()),
                                pair.get(1).and_then(|o| o.id()),
                            ) else {
                                return Err(self.malformed("OpPhi operands must come in pairs"));
                            };
                            incoming.push((self.value(Some(val))?, parent));
                        }
                        phis.push((v.slot, n, incoming));
                    }
                    Some(SpvOp::SelectionMerge) => {
                        block.merge = Some(block_of(self, inst.id_operand(0))?)
                    }
                    Some(SpvOp::LoopMerge) => {
                        block.merge = Some(block_of(self, inst.id_operand(0))?);
                        block.continue_target = Some(block_of(self, inst.id_operand(1))?);
                    }
                    Some(SpvOp::Branch) => {
                        let t = block_of(self, inst.id_operand(0))?;
                        targets.push(t);
                        block.terminator = Terminator::Branch(t);
                    }
                    Some(SpvOp::BranchConditional) => {
                        let cond = self.operand(inst, 0)?.slot;
                        let t = block_of(self, inst.id_operand(1))?;
                        let fl = block_of(self, inst.id_operand(2))?;
                        targets.extend([t, fl]);
                        block.terminator = Terminator::BranchConditional { cond, t, f: fl };
                    }
                    Some(SpvOp::Switch) => {
                        let sel = self.operand(inst, 0)?;
                        let bits = self.scalar(sel.ty).map_or(32, |s| s.bits);
                        let default = block_of(self, inst.id_operand(1))?;
                        targets.push(default);
                        let mut cases = Vec::new();
                        for pair in inst.operands.get(2..).unwrap_or(&[]).chunks(2) {
                            let (Some(lit), Some(label)) = (
                                pair.first().and_then(|o| o.literal()),
                                pair.get(1).and_then(|o| o.id()),
                            ) else {
                                return Err(self.malformed("OpSwitch targets must come in pairs"));
                            };
                            let t = block_of(self, Some(label))?;
                            targets.push(t);
                            cases.push((super::constants::mask_bits(lit, bits), t));
                        }
                        block.terminator = Terminator::Switch {
                            selector: sel.slot,
                            bits,
                            cases,
                            default,
                        };
                    }
                    Some(SpvOp::Return) => block.terminator = Terminator::Return,
                    Some(SpvOp::ReturnValue) => {
                        let v = self.operand(inst, 0)?;
                        block.terminator = Terminator::ReturnValue {
                            src: v.slot,
                            count: self.program.ty(v.ty).slots,
                        };
                    }
                    Some(SpvOp::Kill) | Some(SpvOp::TerminateInvocation) => {
                        block.terminator = Terminator::Kill
                    }
                    Some(SpvOp::Unreachable) => block.terminator = Terminator::Unreachable,
                    _ => {
                        self.lower_inst(inst, &mut out)?;
                        continue;
                    }
                }
                if matches!(
                    op,
                    Some(SpvOp::Branch)
                        | Some(SpvOp::BranchConditional)
                        | Some(SpvOp::Switch)
                        | Some(SpvOp::Return)
                        | Some(SpvOp::ReturnValue)
                        | Some(SpvOp::Kill)
                        | Some(SpvOp::TerminateInvocation)
                        | Some(SpvOp::Unreachable)
                ) {
                    block.term_loc = self.location();
                }
            }
            block.ops = out.ops;
            block.locs = out.locs;
            succ.push(targets);
            merges.push(block.merge);
            conts.push(block.continue_target);
            phi_lists.push(phis);
            blocks.push(block);
        }
        // Phi copies keyed by predecessor block.
        for (b, phis) in phi_lists.into_iter().enumerate() {
            let mut by_pred: Vec<(u32, Vec<(u32, u32)>)> = Vec::new();
            for (dst, n, incoming) in phis {
                for (val, parent) in incoming {
                    let Some(&p) = index.get(&parent) else {
                        continue;
                    };
                    let pos = match by_pred.iter().position(|(q, _)| *q == p) {
                        Some(pos) => pos,
                        None => {
                            by_pred.push((p, Vec::new()));
                            by_pred.len() - 1
                        }
                    };
                    if let Some((_, copies)) = by_pred.get_mut(pos) {
                        copies.extend((0..n).map(|i| (dst + i, val.slot + i)));
                    }
                }
            }
            if let Some(block) = blocks.get_mut(b) {
                block.phis = by_pred;
            }
        }
        let ranks = super::cfg::structured_ranks(&succ, &merges, &conts);
        for (block, rank) in blocks.iter_mut().zip(ranks) {
            block.rank = rank;
        }
        Ok(Function {
            id: f.id,
            params,
            places: self.places(f),
            blocks,
        })
    }

    /// Where the values of `f`'s parameters, variables and results are held, for `DEBUG`'s
    /// watched invocations ([`crate::program::Place`]). Pointer results other than variables and
    /// parameters are left out (an access chain's pointer is no value a debugger shows), as are
    /// loads that share a promoted variable's slots (their slots change with later stores).
    fn places(&self, f: &RawFunction<'m>) -> Vec<(u32, Place)> {
        let insts = f.params.iter().chain(f.blocks.iter().flat_map(|(_, b)| b));
        let mut out = Vec::new();
        for inst in insts {
            let Some(id) = inst.result_id.filter(|_| inst.result_type.is_some()) else {
                continue;
            };
            if self.alias_loads.contains(&id) {
                continue;
            }
            let place = if let Some(&(slot, ty)) = self.reg_ptrs.get(&id) {
                // A promoted variable (or a chain into one): its value's slots.
                match inst.op() {
                    Some(SpvOp::Variable) => Place::Slots { slot, ty },
                    _ => continue,
                }
            } else {
                let Some(v) = self.values.get(&id) else {
                    continue;
                };
                match (&self.program.ty(v.ty).ty, inst.op()) {
                    (Type::Pointer { .. }, Some(SpvOp::Variable | SpvOp::FunctionParameter)) => {
                        match self.pointees.get(&id) {
                            Some(&ty) => Place::Pointee { slot: v.slot, ty },
                            None => match self.program.ty(v.ty).ty {
                                Type::Pointer { pointee, .. } => Place::Pointee {
                                    slot: v.slot,
                                    ty: pointee,
                                },
                                _ => continue,
                            },
                        }
                    }
                    (Type::Pointer { .. } | Type::Opaque | Type::Void, _) => continue,
                    _ => Place::Slots {
                        slot: v.slot,
                        ty: v.ty,
                    },
                }
            };
            out.push((id, place));
        }
        out
    }

    /// Follows `OpLine` / `OpNoLine`: the source line later instructions get in their
    /// locations ([`InstRef::source`]).
    fn track_line(&mut self, inst: &Instruction) {
        match inst.op() {
            Some(SpvOp::Line) => {
                let file = inst.id_operand(0).and_then(|id| self.strings.get(&id));
                self.line = file.map(|file| {
                    Box::new(crate::error::SourceLine {
                        file: file.clone(),
                        line: inst.literal_operand(1).map_or(0, |l| l as u32),
                        column: inst.literal_operand(2).map_or(0, |c| c as u32),
                    })
                });
            }
            Some(SpvOp::NoLine) => self.line = None,
            _ => {}
        }
    }

    /// Lowers one non-terminator instruction into ops.
    pub fn lower_inst(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let Some(op) = inst.op() else {
            return Err(self.unsupported(format!("opcode {}", inst.opcode)));
        };
        if self.lower_coopmat(inst, op, out)? {
            return Ok(());
        }
        match op {
            SpvOp::Nop
            | SpvOp::Line
            | SpvOp::NoLine
            | SpvOp::Name
            | SpvOp::MemberName
            | SpvOp::Source => Ok(()),
            SpvOp::MemoryBarrier => {
                // A scope or semantics that is not a constant orders nothing (the race check
                // then orders less, never more).
                let scope = self.operand(inst, 0)?;
                let scope = self.const_value(scope.slot).unwrap_or(u64::MAX);
                let semantics = self.operand(inst, 1)?;
                let semantics = self.const_value(semantics.slot).unwrap_or(0) as u32;
                self.memory_barrier |= semantics;
                let sync = crate::check::sync::sync_of(scope, semantics, semantics);
                self.memory_barrier_sync |= sync;
                let ordering = crate::check::sync::RELEASE | crate::check::sync::ACQUIRE;
                if sync & ordering != 0 {
                    self.emit(out, Op::Fence { sync });
                }
                Ok(())
            }
            SpvOp::ControlBarrier => {
                // Workgroup (2) or larger execution scope waits for the workgroup; Subgroup
                // scope is satisfied by the tangle itself, and only checked.
                let scope = self.operand(inst, 0)?;
                let scope = self.const_value(scope.slot).unwrap_or(2);
                let memory = self.operand(inst, 1)?;
                let memory = self.const_value(memory.slot).unwrap_or(u64::MAX);
                let semantics = self.operand(inst, 2)?;
                let own = self.const_value(semantics.slot).unwrap_or(0) as u32;
                let semantics = own | std::mem::take(&mut self.memory_barrier);
                let sync = crate::check::sync::sync_of(memory, own, own)
                    | std::mem::take(&mut self.memory_barrier_sync);
                if scope <= 2 {
                    self.emit(out, Op::ControlBarrier { semantics, sync });
                } else if scope == 3 {
                    self.emit(out, Op::SubgroupBarrier { semantics });
                }
                Ok(())
            }
            SpvOp::FunctionCall => self.call(inst, out),
            SpvOp::Variable => self.function_variable(inst, out),
            SpvOp::Load
            | SpvOp::Store
            | SpvOp::AccessChain
            | SpvOp::InBoundsAccessChain
            | SpvOp::PtrAccessChain
            | SpvOp::InBoundsPtrAccessChain
            | SpvOp::CopyMemory
            | SpvOp::ArrayLength
            | SpvOp::ConvertUToPtr
            | SpvOp::ConvertPtrToU
            | SpvOp::AtomicLoad
            | SpvOp::AtomicStore
            | SpvOp::AtomicExchange
            | SpvOp::AtomicCompareExchange
            | SpvOp::AtomicIIncrement
            | SpvOp::AtomicIDecrement
            | SpvOp::AtomicIAdd
            | SpvOp::AtomicISub
            | SpvOp::AtomicSMin
            | SpvOp::AtomicUMin
            | SpvOp::AtomicSMax
            | SpvOp::AtomicUMax
            | SpvOp::AtomicAnd
            | SpvOp::AtomicOr
            | SpvOp::AtomicXor
            | SpvOp::AtomicFAddEXT
            | SpvOp::AtomicFMinEXT
            | SpvOp::AtomicFMaxEXT => self.lower_memory(inst, op, out),
            _ if super::group::is_group(op) => self.lower_group(inst, op, out),
            _ if super::dot::dot_kind(op).is_some() => self.lower_dot(inst, op, out),
            _ if super::image::is_image(op) => self.lower_image(inst, op, out),
            _ => self.lower_arith(inst, op, out),
        }
    }

    /// `OpFunctionCall`.
    fn call(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let fid = inst
            .id_operand(0)
            .ok_or_else(|| self.malformed("call without a function"))?;
        let func = *self
            .function_ids
            .get(&fid)
            .ok_or_else(|| self.unsupported("calling a function without a body"))?;
        let dst = self.value(inst.result_id)?;
        let count = self.program.ty(dst.ty).slots;
        let callee_params = self.callee_params(fid)?;
        let mut args = Vec::new();
        for (i, (pslot, n)) in callee_params.into_iter().enumerate() {
            let a = self.operand(inst, i + 1)?;
            args.extend((0..n).map(|k| (pslot + k, a.slot + k)));
        }
        self.emit(
            out,
            Op::Call {
                func,
                dst: dst.slot,
                count,
                args: args.into_boxed_slice(),
            },
        );
        Ok(())
    }

    /// The parameter slots of function `fid`.
    fn callee_params(&self, fid: u32) -> Result<Vec<(u32, u32)>, ExecError> {
        let mut in_fn = false;
        let mut params = Vec::new();
        for inst in &self.module.instructions {
            match inst.op() {
                Some(SpvOp::Function) => in_fn = inst.result_id == Some(fid),
                Some(SpvOp::FunctionParameter) if in_fn => {
                    let v = self.value(inst.result_id)?;
                    params.push((v.slot, self.program.ty(v.ty).slots));
                }
                Some(SpvOp::Label) if in_fn => break,
                _ => {}
            }
        }
        Ok(params)
    }

    /// A function-scope `OpVariable`: its initializer is stored at function entry.
    fn function_variable(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let v = self.value(inst.result_id)?;
        if let Some(init) = inst.id_operand(1) {
            let init = self.value(Some(init))?;
            if let Some(&(slot, ty)) = inst.result_id.and_then(|id| self.reg_ptrs.get(&id)) {
                let n = self.program.ty(ty).slots;
                for i in 0..n {
                    self.emit(
                        out,
                        Op::Copy {
                            dst: slot + i,
                            src: init.slot + i,
                        },
                    );
                }
                return Ok(());
            }
            let ty = self.pointee_of(v.ty)?;
            self.emit(
                out,
                Op::Store {
                    ptr: v.slot,
                    src: init.slot,
                    ty,
                },
            );
        } else if let Some(&(slot, ty)) = inst.result_id.and_then(|id| self.reg_ptrs.get(&id)) {
            // "If [Initializer is] not present, the variable's value is undefined": marked so
            // for the uninitialised-value check.
            let count = self.program.ty(ty).slots;
            self.emit(out, Op::Undef { dst: slot, count });
        } else {
            // Kept in memory (its address is taken): undefined at each entry of its function.
            let ty = self.pointee_of(v.ty)?;
            let bytes = self.program.ty(ty).size;
            self.emit(out, Op::UndefMemory { ptr: v.slot, bytes });
        }
        Ok(())
    }
}
