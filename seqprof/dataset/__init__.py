"""Read rows, detect the schema, render chat templates, tokenize: the exact length Profile."""
