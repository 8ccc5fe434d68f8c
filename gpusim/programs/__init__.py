"""Ready programs: kernels shipped as ``.cu`` + ``.ptx`` + a launch-and-check ``.toml`` (``catalog``
loads and runs them, ``spec`` evaluates their TOML expressions). The files themselves are package data,
``gpusim.programs.files`` (the checkout's ``programs/`` folder), so they install with the package."""

from gpusim.programs.catalog import (
    ArraySpec,
    CheckResult,
    CheckSpec,
    Expression,
    LaunchSpec,
    ProgramResult,
    ProgramSpec,
    fma32,
    list_programs,
    load_program,
    programs_dir,
    run_program,
)

__all__ = [
    "ArraySpec", "CheckResult", "CheckSpec", "Expression", "LaunchSpec", "ProgramResult", "ProgramSpec",
    "fma32", "list_programs", "load_program", "programs_dir", "run_program",
]
