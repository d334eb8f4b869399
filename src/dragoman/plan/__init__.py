"""`dragoman plan`: replicas for a load from measured bench figures, and a simulated day."""
