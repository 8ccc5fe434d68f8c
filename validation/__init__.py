"""gpusim's validation suite: kernels written here from published algorithms, run on the config of the GPU that
was measured, compared with the published figures (validation/cases/*.toml). ``python -m validation`` runs it,
stores validation/results.json and renders docs/validation.md (validation.report).

Not part of the gpusim package and not collected by the default test run; tests/test_validation_report.py checks
that the committed report is what the renderer makes of results.json and the case files."""
