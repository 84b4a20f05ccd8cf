"""The graph: types, variables, ops and their applications, and the Graph that owns them."""
