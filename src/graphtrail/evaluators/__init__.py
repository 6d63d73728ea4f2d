"""graphtrail.evaluators: replay an agent under graph ablations and score provenance."""

__all__: list[str] = []
