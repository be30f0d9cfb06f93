# torch CPU flash attention backward, fp16: P (and dS) are converted to the input dtype before the
# products that form dV = P^T dO (and dK, dQ), so a recomputed P above 65504 (finding 1: P is not
# clamped to 1) becomes inf in fp16, and with it a gradient whose value fits fp16 easily. The same
# inputs in bf16 (every value is exact in both dtypes) give the same wrong but finite P and a finite dV.
# Exact values: float64 from the same inputs (exact products; P <= 1).
import torch, torch.nn.attention
torch.set_num_threads(1)
A = torch.ops.aten
sk, d, e, seed = 128, 33, 6, 7
scale = float(torch.tensor(d ** -0.5, dtype=torch.float32))
g = torch.Generator().manual_seed(seed)
q = torch.randint(-127, 128, (1, 1, 4, d), generator=g).double() * 2.0**e   # 7-bit integers x 2^6:
k = torch.randint(-127, 128, (1, 1, sk, d), generator=g).double() * 2.0**e  # exact in fp16 and bf16
v = torch.randint(-127, 128, (1, 1, sk, d), generator=g).double() / 128
do = torch.full((1, 1, 4, d), 2.0**-12, dtype=torch.float64)
s = (q @ k.transpose(-1, -2)) * scale
p = torch.softmax(s, dim=-1)
dv_exact = p.transpose(-1, -2) @ do
print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}; "
      f"(b=1, h=1, sq=4, sk={sk}, d={d}), largest |logit| {s.abs().max().item():.3e}, dO = 2^-12")
for dt in (torch.float16, torch.bfloat16):
    args = [t.to(dt) for t in (q, k, v)]
    o, lse = A._scaled_dot_product_flash_attention_for_cpu(*args, 0.0, False, scale=scale)[:2]
    dq, dk, dv = A._scaled_dot_product_flash_attention_for_cpu_backward(do.to(dt), *args, o, lse, 0.0, False, scale=scale)
    qm, km, vm = (t.clone().requires_grad_() for t in args)
    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH]):
        om = torch.nn.functional.scaled_dot_product_attention(qm, km, vm, scale=scale)
    dv_math = torch.autograd.grad(om, vm, do.to(dt))[0]
    bad = (~torch.isfinite(dv)).any(-1)[0, 0]
    rows = bad.nonzero().flatten().tolist() or [int((dv.float() - dv_exact.float()).abs().amax(-1)[0, 0].argmax())]
    j = rows[0]
    print(f"{str(dt)[6:]:8s}: O finite {bool(torch.isfinite(o).all())}; non-finite dQ/dK/dV elements "
          f"{[int((~torch.isfinite(t)).sum()) for t in (dq, dk, dv)]}; key {j}: dV[0] flash {dv[0, 0, j, 0].item():.6g} "
          f"(implied P = dV / dO = {dv[0, 0, j, 0].item() / 2.0**-12:.4g}), math backend {dv_math[0, 0, j, 0].item():.6g}, "
          f"exact {dv_exact[0, 0, j, 0].item():.6g}")
