"""Controllers that run inside the server: namespace lifecycle and garbage collection."""
