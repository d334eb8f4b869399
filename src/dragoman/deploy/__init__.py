"""Running dragoman past one machine: one folder per platform it is deployed on."""
