# torch CPU flash attention backward, fp16/bf16: dV (and dK) are accumulated in the input dtype
# across query blocks (a rounding to the dtype after every 64 query rows) instead of in fp32 with
# one final rounding. "exact" here is float64, enough to compare the two error sizes; the bitwise
# comparison is what identifies the mechanism.
import torch
torch.set_num_threads(1)
A = torch.ops.aten
sq, sk, d, scale = 512, 32, 64, 0.125
for dt, u in ((torch.bfloat16, 2.0 ** -8), (torch.float16, 2.0 ** -11)):
    torch.manual_seed(2)
    q = torch.randn(1, 1, sq, d).to(dt); k = torch.randn(1, 1, sk, d).to(dt)
    v = torch.randn(1, 1, sk, d).to(dt); do = torch.randn(1, 1, sq, d).to(dt)
    o, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, scale=scale)
    dq, dk, dv = A._scaled_dot_product_flash_attention_for_cpu_backward(do, q, k, v, o, lse, 0.0, False, scale=scale)
    # P as torch's backward forms it (fp32 exp(s - LSE)), rounded to the dtype for P^T dO
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    p = torch.exp(s - lse.unsqueeze(-1)).to(dt).float()
    once = (p.transpose(-1, -2) @ do.float()).to(dt)  # fp32 accumulation, one rounding
    print(dt)
    for block in (32, 64, 128):
        acc = torch.zeros(1, 1, sk, d, dtype=dt)
        for m in range(0, sq, block):
            acc = (acc.float() + p[..., m:m + block, :].transpose(-1, -2) @ do[..., m:m + block, :].float()).to(dt)
        print(f"  rounded to the dtype after every {block:3d} query rows: equal to torch's dV in "
              f"{(acc == dv).float().mean().item() * 100:.1f}% of elements")
    print(f"  one final rounding: equal in {(once == dv).float().mean().item() * 100:.1f}% of elements")
    pe = torch.softmax((q.double() @ k.double().transpose(-1, -2)) * scale, -1)
    exact, mag = pe.transpose(-1, -2) @ do.double(), pe.transpose(-1, -2) @ do.double().abs()
    for name, x in (("torch", dv), ("one final rounding", once)):
        print(f"  {name:20s} max |dV - exact| / (u * magnitude) = {((x.double() - exact).abs() / (u * mag)).max().item():.2f}")
