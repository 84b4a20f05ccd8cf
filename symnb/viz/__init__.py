"""Showing graphs: the text form (and, as they land, DOT/SVG, LaTeX and profiles)."""
