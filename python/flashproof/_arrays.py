"""Tensors between the harness (raw bit patterns, bytes) and the user's NumPy arrays or torch tensors.

fp16 and fp32 map to numpy.float16 / numpy.float32. bf16 has no NumPy dtype: it is
ml_dtypes.bfloat16 when ml_dtypes is importable, else uint16 arrays holding the bf16 bit patterns
(``exact_float32`` gives their exact float32 values). torch gets torch.float16/bfloat16/float32.
Every conversion is exact, bit for bit.
"""
import sys

import numpy as np

try:
    import ml_dtypes as _ml_dtypes

    BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # the uint16 bit-pattern fallback
    _ml_dtypes = None
    BFLOAT16 = None

DTYPES = ("fp16", "bf16", "fp32")
_BITS = {"fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32}


def bits_array(data, dtype, shape):
    """bytes from the harness -> a writable uint16/uint32 array of bit patterns."""
    return np.frombuffer(data, dtype=_BITS[dtype]).reshape(shape).copy()


def native_view(bits, dtype):
    """Bit patterns -> the NumPy array a kernel sees (bf16 without ml_dtypes: the bits)."""
    if dtype == "fp16":
        return bits.view(np.float16)
    if dtype == "fp32":
        return bits.view(np.float32)
    return bits.view(BFLOAT16) if BFLOAT16 is not None else bits


def exact_float32(bits, dtype):
    """Bit patterns -> their exact float32 values (every fp16 and bf16 value is one)."""
    if dtype == "fp16":
        return bits.view(np.float16).astype(np.float32)
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return bits.view(np.float32).copy()


def _torch():
    return sys.modules.get("torch")


def torch_dtype(dtype):
    torch = _torch()
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]


def torch_view(bits, dtype, device=None):
    """Bit patterns -> a torch tensor of the dtype (exact), moved to device when given."""
    import torch

    signed = np.int16 if bits.dtype == np.uint16 else np.int32
    tensor = torch.from_numpy(bits.view(signed)).view(torch_dtype(dtype))
    return tensor.to(device) if device is not None else tensor


def to_user(bits, dtype, tensors, device):
    if tensors == "torch":
        return torch_view(bits, dtype, device)
    return native_view(bits, dtype)


def _accepted_numpy(dtype):
    if dtype == "fp16":
        return [np.dtype(np.float16)], "float16"
    if dtype == "fp32":
        return [np.dtype(np.float32)], "float32"
    accepted = [np.dtype(np.uint16)] + ([BFLOAT16] if BFLOAT16 is not None else [])
    return accepted, "ml_dtypes.bfloat16 or uint16 bf16 bit patterns"


def output_bytes(value, dtype, shape, what):
    """A returned output -> its bit patterns as bytes, after checking type, dtype and shape.

    Raises TypeError (not an array, wrong dtype) or ValueError (wrong shape) with one line.
    """
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        expected = torch_dtype(dtype)
        if value.dtype != expected:
            raise TypeError(f"{what} is a torch tensor of dtype {value.dtype}, expected {expected}")
        if tuple(value.shape) != tuple(shape):
            raise ValueError(f"{what} has shape {tuple(value.shape)}, expected {tuple(shape)}")
        signed = torch.int16 if dtype != "fp32" else torch.int32
        array = value.detach().to("cpu").contiguous().view(signed).numpy()
    elif isinstance(value, np.ndarray):
        accepted, wording = _accepted_numpy(dtype)
        if value.dtype not in accepted:
            raise TypeError(f"{what} has dtype {value.dtype}, expected {wording} ({dtype})")
        if tuple(value.shape) != tuple(shape):
            raise ValueError(f"{what} has shape {tuple(value.shape)}, expected {tuple(shape)}")
        array = value
    else:
        raise TypeError(f"{what} is a {type(value).__name__}, expected a NumPy array or a torch tensor")
    return np.ascontiguousarray(array).view(_BITS[dtype]).tobytes()
