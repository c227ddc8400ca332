"""Writes small language models with random weights as GGUF files, for tests/llama/run.py.

Usage: python3 tests/llama/models.py OUT_DIR  (needs the `gguf` and `numpy` packages).

Two architectures llama.cpp's loader accepts from gguf-py's names:
  * `dense`: llama-style (RMS norm, rotary embeddings, grouped-query attention, SwiGLU), head size
    64, 4 query heads over 2 key/value heads;
  * `moe`: the same with a Mixtral-style mixture of experts (llama arch with `expert_count`):
    4 experts, 2 used per token, head size 128, 2 query heads over 1 key/value head.
Each in several weight types: f16, q8_0 and q4_0 (quantised by gguf.quants) and q4_K (gguf-py
cannot quantise k-quants, so its blocks are written directly: random 4-bit values and 6-bit
scales under small finite f16 super-block scales; a random model needs no fitted quantisation).
Norms and the MoE router stay f32, as llama.cpp's converters keep them.

Sizes are picked for tangle's exact executor: embedding 256 (a multiple of the k-quants' 256-value
super-block), feed-forward 512, 2 layers, a 512-token vocabulary; 1-3 MB per file. Batches of 64
tokens or more reach ggml's matrix-matrix (cooperative-matrix and integer-dot) kernels, single
tokens its matrix-vector kernels. The tokenizer is a SentencePiece-style vocabulary (3 control
tokens, 256 byte tokens, 253 word pieces) so that llama.cpp loads it; the tests feed token ids.
"""

import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

N_VOCAB = 512
N_EMBD = 256
N_FF = 512
N_LAYER = 2
N_CTX = 512

ARCHS = {
    # name: (head size, query heads, key/value heads, experts, experts used, expert ffn)
    "dense": (64, 4, 2, 0, 0, 0),
    "moe": (128, 2, 1, 4, 2, 256),
}
WEIGHT_TYPES = {"f16": Q.F16, "q8_0": Q.Q8_0, "q4_0": Q.Q4_0, "q4_k": Q.Q4_K}


def vocabulary():
    """SentencePiece-style tokens, scores and types (llama.cpp's `llama` tokenizer model)."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces = ["\u2581"] + [f"\u2581{c}" for c in letters] + list(letters)
    pieces += [a + b for a in letters for b in letters]
    pieces = pieces[: N_VOCAB - len(tokens)]
    tokens += pieces
    types += [gguf.TokenType.NORMAL] * len(pieces)
    scores = [0.0] * (N_VOCAB - len(pieces)) + [-float(i) for i in range(len(pieces))]
    return tokens, scores, types


def q4_k(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Q4_K blocks for a (n, k) matrix, k a multiple of 256: per 256 values `d` and `dmin` (f16),
    12 bytes of packed 6-bit scales and mins, 128 bytes of 4-bit values (ggml's block_q4_K).
    The values are random: the weights only have to be some fixed Q4_K tensor."""
    n, k = rows.shape
    blocks = n * (k // 256)
    # A weight is d * scale * q - dmin * min, scale and min 6-bit, q 4-bit: d = 2^-12 and
    # dmin = 2^-11 give weights of order 0.05, as the other types' 1/sqrt(256) = 0.0625.
    d = np.full((blocks, 1), 2.0**-12, dtype=np.float16).view(np.uint8).reshape(blocks, 2)
    dmin = np.full((blocks, 1), 2.0**-11, dtype=np.float16).view(np.uint8).reshape(blocks, 2)
    scales = rng.integers(0, 256, size=(blocks, 12), dtype=np.uint8)
    qs = rng.integers(0, 256, size=(blocks, 128), dtype=np.uint8)
    return np.concatenate([d, dmin, scales, qs], axis=1).reshape(n, (k // 256) * 144)


def weight(writer, name, shape, qtype, rng, scale):
    """A random weight of numpy shape `shape` (GGUF's dimensions reversed), stored as `qtype`."""
    data = (rng.standard_normal(shape) * scale).astype(np.float32)
    if qtype == Q.Q4_K:
        flat = data.reshape(-1, shape[-1])
        writer.add_tensor(name, q4_k(flat, rng).reshape(*shape[:-1], -1), raw_dtype=Q.Q4_K)
    elif qtype in (Q.F16, Q.F32):
        writer.add_tensor(name, gguf.quants.quantize(data, qtype))
    else:
        writer.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)


def write_model(path: Path, arch: str, wtype: str, seed: int = 1):
    head, n_head, n_head_kv, n_expert, n_used, n_ff_exp = ARCHS[arch]
    qtype = WEIGHT_TYPES[wtype]
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"tangle-{arch}-{wtype}")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    # llama.cpp's llama architecture sizes its experts by feed_forward_length.
    w.add_feed_forward_length(n_ff_exp if n_expert else N_FF)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_key_length(head)
    w.add_value_length(head)
    w.add_rope_dimension_count(head)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(N_VOCAB)
    if n_expert:
        w.add_expert_count(n_expert)
        w.add_expert_used_count(n_used)
    w.add_file_type({"f16": 1, "q8_0": 7, "q4_0": 2, "q4_k": 15}[wtype])
    w.add_quantization_version(2)
    tokens, scores, types = vocabulary()
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)

    q_dim, kv_dim = head * n_head, head * n_head_kv
    # Scales keep activations of order 1: 1/sqrt(fan-in) for projections; the output projection
    # larger, so that the top logits are well separated (greedy choices are then stable).
    weight(w, "token_embd.weight", (N_VOCAB, N_EMBD), qtype, rng, 1.0)
    norm = lambda n: (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
    for i in range(N_LAYER):
        b = f"blk.{i}"
        s = N_EMBD**-0.5
        w.add_tensor(f"{b}.attn_norm.weight", norm(N_EMBD))
        weight(w, f"{b}.attn_q.weight", (q_dim, N_EMBD), qtype, rng, s)
        weight(w, f"{b}.attn_k.weight", (kv_dim, N_EMBD), qtype, rng, s)
        weight(w, f"{b}.attn_v.weight", (kv_dim, N_EMBD), qtype, rng, s)
        weight(w, f"{b}.attn_output.weight", (N_EMBD, q_dim), qtype, rng, q_dim**-0.5)
        w.add_tensor(f"{b}.ffn_norm.weight", norm(N_EMBD))
        if n_expert:
            router = (rng.standard_normal((n_expert, N_EMBD)) * s).astype(np.float32)
            w.add_tensor(f"{b}.ffn_gate_inp.weight", router)
            weight(w, f"{b}.ffn_gate_exps.weight", (n_expert, n_ff_exp, N_EMBD), qtype, rng, s)
            weight(w, f"{b}.ffn_up_exps.weight", (n_expert, n_ff_exp, N_EMBD), qtype, rng, s)
            weight(w, f"{b}.ffn_down_exps.weight", (n_expert, N_EMBD, n_ff_exp), qtype, rng,
                   n_ff_exp**-0.5)
        else:
            weight(w, f"{b}.ffn_gate.weight", (N_FF, N_EMBD), qtype, rng, s)
            weight(w, f"{b}.ffn_up.weight", (N_FF, N_EMBD), qtype, rng, s)
            weight(w, f"{b}.ffn_down.weight", (N_EMBD, N_FF), qtype, rng, N_FF**-0.5)
    w.add_tensor("output_norm.weight", norm(N_EMBD))
    weight(w, "output.weight", (N_VOCAB, N_EMBD), qtype, rng, 4.0 * N_EMBD**-0.5)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_all(out: Path, names=None):
    """Writes every model (or those named `ARCH-WTYPE`); returns {name: path}."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for arch in ARCHS:
        for wtype in WEIGHT_TYPES:
            name = f"{arch}-{wtype}"
            if names and name not in names:
                continue
            path = out / f"{name}.gguf"
            write_model(path, arch, wtype)
            paths[name] = path
    return paths


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: models.py OUT_DIR [ARCH-WTYPE ...]")
    for name, path in write_all(Path(sys.argv[1]), sys.argv[2:]).items():
        print(f"{name}: {path} ({path.stat().st_size / 1e6:.2f} MB)")
