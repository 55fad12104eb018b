"""PodSecurity admission: kube's Pod Security Standards, chosen per namespace by label."""
