"""`dragoman deploy k8s`: Kubernetes manifests from the settings that drive `dragoman serve`."""
