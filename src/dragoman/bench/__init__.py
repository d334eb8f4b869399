"""The measuring kit: workloads from real text, a load generator, utilisation sampling, reports,
the seed's baseline architectures and a tuning sweep."""
