"""Sample webhook services the API server calls: each is its own twistd plugin."""
