"""Placeholder: lands with its issue."""
