"""Imitate an AVX2-only host on an AVX-512 one, for measurements only.

Put this directory first on PYTHONPATH together with ONEDNN_MAX_CPU_ISA=AVX2 and
ATEN_CPU_CAPABILITY=avx2: oneDNN and PyTorch then cap their own kernels at AVX2, and with
PyTorch's AVX-512 probes answering False here, vLLM loads its AVX2 kernel library (_C_AVX2)
and takes its non-AVX-512 code paths, as on a host without AVX-512. Memory bandwidth and clock
stay the host's own, so compare forms as ratios within one run.
"""

import os

if os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper().startswith("AVX2"):
    import torch

    for probe in ("_is_avx512_supported", "_is_avx512_bf16_supported", "_is_avx512_vnni_supported",
                  "_is_amx_tile_supported", "_is_amx_fp16_supported"):
        if hasattr(torch.cpu, probe):
            setattr(torch.cpu, probe, lambda: False)
