import math, torch
torch.set_num_threads(1)
op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
print("cpu capability:", torch.backends.cpu.get_cpu_capability(), "torch", torch.__version__)
for dtype in (torch.float16, torch.bfloat16, torch.float32):
    row = []
    for n in (7, 8, 15, 16, 17, 31, 32):
        q = torch.zeros(1, 1, 1, 64, dtype=dtype)
        k = torch.randn(1, 1, n, 64).to(dtype)
        v = torch.randn(1, 1, n, 64).to(dtype)
        out = op(q, k, v)
        lse = out[1].float().item()
        row.append(f"n={n}: {lse - math.log(n):+.3e}")
    print(str(dtype).replace("torch.", ""), "  LSE - log n:", ", ".join(row))
# exp(0) by the fast-exp method's integer construction: 2^23 (x log2 e - K(frac)) + 127 2^23 with
# K(0) = c0 = 0.00010703434948458272, rounded to an integer and read as float bits.
import struct
bits = round(2**23 * (0 - 0.00010703434948458272) + 2**23 * 127)
e0 = struct.unpack("<f", struct.pack("<I", bits))[0]
print("fast exp(0) =", repr(e0), " log of it:", f"{math.log(e0):+.3e}")
