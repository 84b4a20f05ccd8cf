"""Stabilize: rewrites that make results accurate where the naive graph over/underflows."""
