from ._instantiate import instantiate

__all__ = [
    "instantiate",
]
