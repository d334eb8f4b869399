"""Model provisioning: the catalogue of embedded models and `dragoman model prepare`."""
