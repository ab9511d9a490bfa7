"""The command line: thin edges that parse, call and print."""
