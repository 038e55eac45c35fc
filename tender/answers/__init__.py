"""What Tender answers, to the MCP server and the CLI alike: result shapes, plain-text plans, explanations of
the bidding, catalogue look-ups, and the run log."""
