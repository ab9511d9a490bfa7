"""Built-in tools and the registry the turn loop executes them through."""
