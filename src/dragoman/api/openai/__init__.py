"""The OpenAI-compatible surface: `GET /v1/models` and `POST /v1/chat/completions`, streamed
or not, so OpenAI clients and `vllm bench serve --backend openai-chat` work unchanged. Chat is
not a translation: the messages go through the model's own chat template straight to the
engine (under the same draining, key limits, admission and deadline as translation).

What is honoured: `content` as a string or a list of text parts; `max_completion_tokens`
(wins) or `max_tokens`, capped to the room left in the model's context (a prompt with no room
is 400 `context_length_exceeded`), to the server's --max-output-tokens and to what the key may
still spend (service/generation.py: messages' characters and 4 a token of the answer are
charged); `temperature`, `top_p`, `presence_penalty`, `frequency_penalty`, `stop`, `seed`;
vLLM's extras `top_k`, `min_p`, `repetition_penalty`, `ignore_eos` (within those caps, and
charged for every token); `stream_options.include_usage`. Unset sampling fields take the
model's own generation defaults, as vLLM's server does. Unknown fields are ignored.

What is refused with 400 (ignoring them would give an answer the client does not expect):
`n` other than 1, `logprobs`/`top_logprobs`, non-empty `tools`, a `response_format` other
than text, non-text content parts. `tool_choice`, `user` and the like are ignored.

Errors are OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, chosen by path
in api/errors.py; an unknown model is 404 `model_not_found`. An error after a stream started
is a `data: {"error": ...}` event before `[DONE]`. A client that leaves aborts the engine
request, streamed or not."""
