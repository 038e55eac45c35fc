"""Tender: recommends the APIs or tools a composite service needs, by a Contract Net among contractor agents."""

__version__ = "0.2.0"
