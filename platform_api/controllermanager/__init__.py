"""``twistd platform-controller-manager``: the controllers, in a process of their own."""
