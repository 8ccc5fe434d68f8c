"""Package data: installed as ``gpusim.programs.files`` (see pyproject.toml), so the labs and
``gpusim run NAME`` find these kernels after a plain ``pip install``."""
