"""Client side: kubeconfig files and the HTTPS clients the server's webhooks use."""
