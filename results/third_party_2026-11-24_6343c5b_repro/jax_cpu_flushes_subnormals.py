# jax.nn.dot_product_attention on the CPU flushes subnormal intermediates and results to zero
# (XLA's CPU denormal handling): with every value 2^-127 (a bf16 subnormal) and equal logits the
# exact output is 2^-127; JAX returns 0. torch's math path keeps it.
import jax, jax.numpy as jnp, numpy as np, ml_dtypes, torch, mpmath
jax.config.update("jax_platforms", "cpu")
n, d = 16, 8
q = np.zeros((1, 1, 1, d), ml_dtypes.bfloat16); k = np.zeros((1, n, 1, d), ml_dtypes.bfloat16)
v = np.full((1, n, 1, d), 2.0 ** -127, ml_dtypes.bfloat16)
o = jax.nn.dot_product_attention(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v), scale=1.0)
exact = mpmath.fsum([mpmath.mpf(2) ** -127 / n] * n)
tm = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).transpose(1, 2) for x in (q, k, v)), scale=1.0)
print("exact", float(exact), " jax", float(np.asarray(o, np.float32)[0, 0, 0, 0]), " torch sdpa", tm[0, 0, 0, 0].item())
