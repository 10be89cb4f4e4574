"""Training configs: YAML/JSON with lines, framework dialects, the normalised Plan."""
