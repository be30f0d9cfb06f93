# torch CPU flash attention forward, fp16/bf16 inputs: the fp32 LSE it returns is off by about 5e-5
# because the vectorised exponential on that path is: with every logit 0 (q = 0) the LSE must be
# log(n) exactly up to fp32 rounding; for n >= 8 (one AVX2 vector) torch returns log(n) - 5.34e-5,
# i.e. exp(0) = 0.99994660. The same op on fp32 inputs, and the scalar tail (n < 8), are exact.
# Second part: logits exact (head dim 1), checked against mpmath at 320 bits.
import math
import torch, mpmath
torch.set_num_threads(1)
mpmath.mp.prec = 320
A = torch.ops.aten
for dt in (torch.float32, torch.float16, torch.bfloat16):
    for n in (7, 8, 128):
        q = torch.zeros(1, 1, 1, 8, dtype=dt); k = torch.randn(1, 1, n, 8).to(dt); v = torch.zeros(1, 1, n, 8, dtype=dt)
        o, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, scale=1.0)
        print(f"{str(dt):15} q = 0, n = {n:3d}: LSE {lse.item():.9f}, log(n) {math.log(n):.9f}, "
              f"error {lse.item() - math.log(n):+.2e}")
keys = torch.tensor([0.0] + [-1.0] * 15)  # logits k_j exactly (q = 1, d = 1, scale 1)
exact = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(x))) for x in keys))
for dt in (torch.float32, torch.float16, torch.bfloat16):
    q = torch.ones(1, 1, 1, 1, dtype=dt); k = keys.view(1, 1, 16, 1).to(dt); v = torch.zeros(1, 1, 16, 1, dtype=dt)
    o, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, scale=1.0)
    print(f"{str(dt):15} logits [0, -1 x 15]: LSE {lse.item():.9f}, exact (mpmath) {float(exact):.9f}, "
          f"error {lse.item() - float(exact):+.2e} (torch.logsumexp in fp32: "
          f"{torch.logsumexp(keys.float(), 0).item() - float(exact):+.2e})")
