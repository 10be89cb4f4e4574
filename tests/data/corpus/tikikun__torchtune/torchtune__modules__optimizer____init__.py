from .adam_mini import Adam_mini

__all__ = ['Adam_mini']