# torch CPU flash attention backward: P = exp(s - LSE) is recomputed without a clamp; with large
# (finite) logits the recomputed logit can exceed the forward's LSE by whole units, so dV, dK, dQ
# are finite but far off (or inf/NaN). Independent check: mpmath at 320 bits from the same inputs.
import torch, torch.nn.attention, mpmath
torch.set_num_threads(1)
mpmath.mp.prec = 320
A = torch.ops.aten
scale = 0.19611613452434540  # fp32(1/sqrt(26))
for seed, amp in ((0, 2.0**11), (1, 2.0**15)):
    torch.manual_seed(seed)
    q = (torch.randn(1, 1, 1, 26) * amp).bfloat16(); k = (torch.randn(1, 1, 6, 26) * amp).bfloat16()
    v = torch.randn(1, 1, 6, 26).bfloat16(); do = torch.randn(1, 1, 1, 26).bfloat16()
    o, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, scale=scale)
    dq, dk, dv = A._scaled_dot_product_flash_attention_for_cpu_backward(do, q, k, v, o, lse, 0.0, False, scale=scale)
    f = lambda t: [mpmath.mpf(float(x)) for x in t]
    s = [mpmath.mpf(scale) * mpmath.fdot(f(q[0, 0, 0]), f(k[0, 0, j])) for j in range(6)]
    m = max(s); lse_x = m + mpmath.log(mpmath.fsum(mpmath.exp(x - m) for x in s))
    p = [mpmath.exp(x - lse_x) for x in s]
    j = max(range(6), key=lambda i: p[i])
    dv_exact = p[j] * mpmath.mpf(float(do[0, 0, 0, 0]))          # dV[j, 0] = sum_i P_ij dO_i0 (one query)
    qm, km, vm = (t.clone().requires_grad_() for t in (q, k, v))
    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH]):
        om = torch.nn.functional.scaled_dot_product_attention(qm, km, vm, scale=scale)
    dv_math = torch.autograd.grad(om, vm, do)[0]
    print(f"seed {seed}, inputs N(0,1)*{amp:g}: LSE torch {lse.item():.6e} exact {float(lse_x):.6e}; "
          f"dV[key {j}, 0]: torch {dv[0, 0, j, 0].item():.6g}, exact (mpmath) {float(dv_exact):.6g}, math backend {dv_math[0, 0, j, 0].item():.6g}; "
          f"non-finite dQ/dK/dV elements: {[int((~torch.isfinite(t)).sum()) for t in (dq, dk, dv)]}")
