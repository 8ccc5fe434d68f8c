"""Functional semantics: what each warp-instruction computes, lane by lane, and the functional-only loop."""
