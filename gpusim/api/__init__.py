"""The public API's objects: ``GPU``, ``Module`` and ``Kernel`` (``gpu``). ``gpusim/__init__.py`` re-exports
them with the rest of the public names."""
