"""dragoman on Ray Serve (the optional `ray` extra): one deployment per catalogue model (model
group) whose replicas each own one engine, behind an ingress deployment that serves every API
surface and routes each text by language pair to its model's deployment handle.

`dragoman deploy ray` starts (or attaches to) a Ray cluster and runs the app; for Ray's own
tools the import path is `dragoman.deploy.ray.app:build`, e.g.
`DRAGOMAN_CONFIG=server.toml serve run dragoman.deploy.ray.app:build`, or the Serve config
that `dragoman deploy ray --config-out serve.yaml` writes."""
