"""Front ends for kernels written in Python: numba.cuda (``numba_cuda.py``) and Triton (``triton.py``).

Each compiles the Python kernel to PTX with the project's own compiler (numba-cuda's NVVM, Triton's
LLVM back end; both run without a GPU or a driver), loads that PTX on a gpusim GPU and maps the
compiler's launch ABI (how it flattens its arguments into ``.param`` slots) onto gpusim's launch.
The compilers are optional extras (``pip install 'gpusim[numba-cuda]'``, ``'gpusim[triton]'``);
nothing here imports them until a kernel is compiled.
"""
