"""Mutable engine state records as numba StructRefs.

A namedtuple of arrays would be the obvious record, but numba passes tuples
by value and reference-counts every member at each call, which costs hundreds
of nanoseconds per call on the hot path. A StructRef is passed by reference
(one reference count), and it works with ``cache=True``.
"""

from __future__ import annotations

from numba.core import types
from numba.experimental import structref


class EngineStructType(types.StructRef):
    """Base of the engine's StructRef types. Subclass it at module level (numba's on-disk cache
    pickles the type by its module and name) and pass the subclass to ``make_struct``."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


def make_struct(proxy, struct_type, fields: list[str]):
    """Register ``struct_type`` and make ``proxy`` (a StructRefProxy subclass) its Python face with
    ``fields``; build instances with ``proxy.build(**arrays)``."""
    name = proxy.__name__
    structref.register(struct_type)
    structref.define_proxy(proxy, struct_type, fields)

    def build(**values):
        missing = [f for f in fields if f not in values]
        if missing:
            raise TypeError(f"{name}: missing fields {missing}")
        instance = proxy(*(values[f] for f in fields))
        for field in fields:       # the same arrays, readable from Python too
            instance.__dict__[field] = values[field]
        return instance

    proxy.build = staticmethod(build)
    proxy.fields = tuple(fields)
    return proxy
